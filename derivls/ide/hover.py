"""Hover: what an entry, a key or a word of a formula means to torchgen, as markdown (and plain text)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from derivls.aten.native import NativeFunction, NativeIndex
from derivls.base.diagnostics import Code, Span
from derivls.codes.docs import doc_uri
from derivls.derivatives.loader import DocumentAnalysis
from derivls.derivatives.profiles import TORCHGEN, Profile
from derivls.ide import facts
from derivls.ide.formula_editor import call_schemas, helper_declarations, semantic_tokens
from derivls.ide.formulas import formula_at, headers_of
from derivls.ide.targets import Target, target_at

_GRADS = re.compile(r"^grads\[(\d+)\]$")
_RESULT_N = re.compile(r"^result(\d+)$")

KNOWN_WORDS = {
    "grad_input_mask": "`grad_input_mask`: a `std::array<bool, N>` saying which inputs of this formula need a "
    "gradient (N = the names in the key); use it to skip work.",
    "retain_variables": "`retain_variables`: true when the graph is kept for another backward "
    "(`retain_graph=True`); saved variables must then not be released.",
    "non_differentiable": "`non_differentiable`: these inputs get no gradient; torchgen generates no formula.",
    "not_implemented": "`not_implemented(\"name\")`: the gradient raises 'the derivative for name is not implemented'.",
}


@dataclass(frozen=True)
class HoverInfo:
    """What to show on hover, and the span it is about (0-based code points)."""

    markdown: str
    span: Span | None

    @property
    def plain(self) -> str:
        return plain(self.markdown)


def hover(analysis: DocumentAnalysis, index: NativeIndex | None, line: int, column: int) -> HoverInfo | None:
    """Hover at (line, column) of an analysed document; `index` is the native index it was analysed with.
    On a squiggle, the first paragraph of each diagnostic's code doc comes first (with a link to the doc)."""
    found = [d for d in analysis.diagnostics if d.span.contains(line, column)]
    info = _hover(analysis, index, line, column)
    if not found:
        return info
    notes = "\n\n".join(code_note(code) for code in dict.fromkeys(d.code for d in found))
    if info is None:
        return HoverInfo(notes, found[0].span)
    return HoverInfo(f"{notes}\n\n---\n\n{info.markdown}", info.span)


def code_note(code: Code) -> str:
    """A diagnostic code's first doc paragraph, with a link to its whole doc (shipped in the package)."""
    return f"**`{code}`** ({code.severity.label}): {code.first_paragraph} [More]({doc_uri(code)})"


def _hover(analysis: DocumentAnalysis, index: NativeIndex | None, line: int, column: int) -> HoverInfo | None:
    target = target_at(analysis, line, column)
    if target is None:
        return None
    if target.kind == "formula" and target.pattern is None:
        code = describe_call(analysis, line, column)
        if code is not None:
            return HoverInfo(code, target.span)
    text = describe(target, index)
    if not text:
        return None
    return HoverInfo(text, target.span)


CALL_KINDS = ("helper", "aten", "method")


def describe_call(analysis: DocumentAnalysis, line: int, column: int) -> str | None:
    """Markdown for a helper, `at::` function or Tensor method named at (line, column) of a formula:
    its FunctionsManual.h declaration(s) or native_functions.yaml schema(s), every overload."""
    at = formula_at(analysis, line, column)
    headers = headers_of(analysis)
    if at is None or headers is None:
        return None
    token = next((t for t in semantic_tokens(at.formula, at.scope, headers) if t.start <= at.offset <= t.end), None)
    if token is None or token.kind not in CALL_KINDS:
        return None
    name = at.formula[token.start : token.end]
    if token.kind == "helper":
        decls = helper_declarations(name, headers)
        if not decls:
            return None
        count = f"{len(decls)} overloads" if len(decls) > 1 else "1 declaration"
        first = decls[0]
        link = f"[{Path(first.path).name}:{first.line + 1}]({file_uri(first.path)}#L{first.line + 1})"
        body = "\n".join(d.text if d.text.endswith(";") else d.text + ";" for d in decls)
        return f"**helper** `{name}` ({count})\n\n{_code(body, 'cpp')}\n\n{link}"
    method = token.kind == "method"
    schemas = call_schemas(name, headers, method=method)
    what = "Tensor method" if method else "ATen function"
    if not schemas:
        if method and name in headers.tensor_methods:
            return f"**{what}** `{name}`: written by hand in TensorBody.h / TensorBase.h (no schema)."
        return None
    count = f"{len(schemas)} overloads" if len(schemas) > 1 else "1 schema"
    return f"**{what}** `{name}` ({count}, native_functions.yaml)\n\n{_code(chr(10).join(schemas))}"


def file_uri(path: str) -> str:
    """A `file:` URI for a link in markdown."""
    return Path(path).as_uri() if Path(path).is_absolute() else f"file://{path}"


def plain(markdown: str) -> str:
    lines = [line for line in markdown.splitlines() if not line.startswith("```")]
    text = "\n".join(lines)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return text.replace("**", "").replace("`", "")


def describe(target: Target, index: NativeIndex | None = None) -> str | None:
    """Markdown about what `target` is (None when there is nothing to say)."""
    if target.kind == "name":
        return describe_entry(target, index)
    if target.kind == "dispatch":
        return describe_dispatch(target)
    if target.kind == "output_differentiability":
        return describe_output_differentiability(target)
    f = target.entry.result.canonical
    if f is None:
        return None
    if target.kind == "key":
        return describe_key(target)
    if target.kind == "formula":
        return describe_formula(target)
    return None


def _code(text: str, language: str = "") -> str:
    return f"```{language}\n{text}\n```"


def describe_entry(target: Target, index: NativeIndex | None) -> str | None:
    placed = target.entry
    result = placed.result
    schema = result.schema_string
    f = result.schema_function
    profile = facts.profile_of(placed)
    rules = f"**Rules:** {profile.describe()}"  # which loader / release rules, and why they were chosen
    if f is None:
        if schema is None:
            return None
        return (
            f"{_code(schema)}\n\nNo function in native_functions.yaml has this schema (see the diagnostic).\n\n{rules}"
        )
    parts = [_code(str(f.func)), _code(facts.cpp_signature(f, profile), "cpp")]
    variants = ", ".join(sorted(v.name for v in f.variants)) or "none"
    parts.append(f"**Variants:** {variants}")
    canonical = result.canonical
    if canonical is not None and canonical is not f:
        parts.append(f"**Formulas are about:** `{canonical.func}`")
    if index is not None:
        group = facts.overload_group(index, f, profile)
        if len(group) > 1:
            rows = [f"- {g.func.kind().name}: `{g.func}`" for g in group]
            parts.append("**Overloads sharing these formulas:**\n" + "\n".join(rows))
    nodes = [(key, op) for key, op in placed.ops]
    if nodes:
        rows = []
        for key, op in nodes:
            label = f"`{op}`" if op else "no node (no backward formula)"
            rows.append(f"{label} ({key})" if len(nodes) > 1 or key != "Default" else label)
        parts.append("**Autograd node:** " + ", ".join(rows))
    infos = dict(placed.infos())
    for key, info in infos.items():
        prefix = "" if len(infos) == 1 else f" ({key})"
        saved = facts.saved_attributes(info)
        if saved:
            parts.append(f"**Saves{prefix}:** " + ", ".join(f"`{facts.saved_label(a)}`" for a in saved))
        differentiable = [b.name for b in info.args_with_derivatives]
        if differentiable:
            parts.append(f"**Differentiable{prefix}:** " + ", ".join(f"`{n}`" for n in differentiable))
        if info.non_differentiable_arg_names:
            parts.append(
                f"**Not differentiable{prefix}:** " + ", ".join(f"`{n}`" for n in info.non_differentiable_arg_names)
            )
        if info.output_differentiability is not None:
            outputs = facts.output_facts(info.func, profile)
            flags = ", ".join(
                f"`{o.name}` {'yes' if d else 'no'}" for o, d in zip(outputs, info.output_differentiability)
            )
            parts.append(f"**Output differentiability{prefix}:** {flags}")
    parts.append(rules)
    if f.line is not None:
        native = f.path
        parts.append(f"[native_functions.yaml:{f.line}]({file_uri(native)}#L{f.line})")
    return "\n\n".join(parts)


def describe_dispatch(target: Target) -> str | None:
    key = target.word
    op = target.entry.op(key) if key else None
    if key == "Default":
        what = "the formulas used unless a more specific Autograd key below applies"
    else:
        what = f"the formulas for the `{key}` dispatch key"
    text = f"**{key}**: {what}."
    if op:
        text += f"\n\nAutograd node: `{op}`"
    return text


def describe_output_differentiability(target: Target) -> str | None:
    f = target.entry.result.canonical
    lines = [
        "**output_differentiability**: which outputs get a gradient (one True/False per output, "
        "or a single condition string for a one-output function)."
    ]
    if f is not None:
        profile = facts.profile_of(target.entry)
        rows = [f"- `{o.name}`: `{o.schema_type}` (`{o.cpp_type}`)" for o in facts.output_facts(f, profile)]
        lines.append("Outputs:\n" + "\n".join(rows))
    return "\n\n".join(lines)


def _arg(f: NativeFunction, name: str, profile: Profile = TORCHGEN) -> facts.ArgFact | None:
    for a in facts.arg_facts(f, profile):
        if a.name == name:
            return a
    return None


def _output(f: NativeFunction, name: str, profile: Profile = TORCHGEN) -> facts.OutputFact | None:
    outputs = facts.output_facts(f, profile)
    for o in outputs:
        if o.name == name or o.schema_name == name:
            return o
    m = _RESULT_N.match(name)
    if m and int(m.group(1)) < len(outputs):
        return outputs[int(m.group(1))]
    if name == "result" and len(outputs) == 1:
        return outputs[0]
    return None


def _type_in_backward(target: Target, name: str) -> str | None:
    """The C++ type a backward formula sees `name` as, where derivls knows it to differ from the
    kernel's (a `Tensor?` unpacked into a Tensor, an `int[]` saved as a std::vector); else None."""
    kr, section = target.key_result, target.section_result
    if kr is None or kr.kind != "backward" or section is None or target.entry.result.canonical is None:
        return None
    from derivls.ide.formula_editor import scope_for_key

    local = scope_for_key(target.entry.result, section, kr).get(name)
    return local.cpp_type if local is not None and local.holds else None


def _arg_line(a: facts.ArgFact) -> str:
    schema = f"`{a.schema_type}`" if a.schema_type else "(part of TensorOptions)"
    return f"`{a.name}`: {schema} — C++ `{a.cpp_type}`"


def _differentiability(target: Target, name: str) -> str:
    info = target.info
    if info is None:
        return ""
    if name in {b.name for b in info.args_with_derivatives}:
        return "differentiable (has a backward formula)"
    if name in info.non_differentiable_arg_names:
        return "marked non_differentiable"
    return "not differentiable (no formula)"


def describe_key(target: Target) -> str | None:
    f = target.entry.result.canonical
    name = target.word
    if f is None or not name:
        return None
    profile = facts.profile_of(target.entry)
    a = _arg(f, name, profile)
    kr = target.key_result
    if a is not None:
        text = _arg_line(a)
        state = _differentiability(target, name)
        if state:
            text += f"\n\n{state}"
        if kr is not None and kr.kind == "backward":
            saves = facts.derivative_saves(kr)
            text += "\n\nThis formula computes the gradient of `" + name + "`."
            if saves:
                text += " It makes the node save: " + ", ".join(f"`{facts.saved_label(s)}`" for s in saves)
        return text
    o = _output(f, name, profile)
    if o is not None:
        text = f"output `{o.name}`: `{o.schema_type}` — C++ `{o.cpp_type}`"
        if kr is not None and kr.kind == "forward":
            text += "\n\nThis is the forward-mode formula (the tangent of this output)."
        return text
    return None


def describe_formula(target: Target) -> str | None:
    f = target.entry.result.canonical
    assert f is not None
    kr = target.key_result
    if target.pattern is not None:
        p = target.pattern
        saved = None
        for s in facts.derivative_saves(kr):
            if facts.saved_label(s).startswith(p.saved_name + ":"):
                saved = s
        text = f"`{p.text}` is computed at forward time and saved as `{p.saved_name}: {p.cpp_type}`"
        if saved is not None and saved.expr != p.text:
            text += f"\n\nsaved expression: `{saved.expr}`"
        return text
    word = target.word
    if not word:
        return None
    value = target.item.value.value if target.item is not None else None
    if isinstance(value, str) and value.strip() in ("auto_element_wise", "auto_linear") and word == value.strip():
        if kr is not None and kr.forward is not None:
            return f"**{word}** expands to the forward formula:\n\n{_code(kr.forward.formula, 'cpp')}"
        return f"**{word}**: torchgen derives the forward formula (see the diagnostics if it cannot)."
    profile = facts.profile_of(target.entry)
    outputs = facts.output_facts(f, profile)
    if word == "grad":
        first = outputs[0] if outputs else None
        detail = f" `{first.name}`: `{first.schema_type}` (C++ `{first.cpp_type}`)" if first else ""
        return f"`grad`: the gradient flowing back into the output{detail}; the same as `grads[0]`."
    m = _GRADS.match(word)
    if m:
        i = int(m.group(1))
        if i < len(outputs):
            out = outputs[i]
            return f"`grads[{i}]`: the gradient of output {i} `{out.name}`: `{out.schema_type}` (C++ `{out.cpp_type}`)"
        return f"`grads[{i}]` is out of bounds: {f.func.name} has {len(outputs)} output(s)."
    if word.startswith("grad_"):
        output_name = word[len("grad_") :]
        o = _output(f, output_name, profile)
        if o is not None and o.schema_name == output_name:
            available = target.info.available_named_gradients if target.info is not None else ()
            note = "" if word in available else " (not available: the output is not differentiable)"
            return f"`{word}`: the gradient of the output `{o.name}`: `{o.schema_type}` (C++ `{o.cpp_type}`){note}"
    a = _arg(f, word, profile)
    if a is not None:
        text = _arg_line(a)
        state = _differentiability(target, word)
        if state:
            text += f"\n\n{state}"
        if any(facts.saved_label(s).startswith(word + ":") for s in facts.derivative_saves(kr)):
            text += "\n\nSaved by the node for this formula."
        unpacked = _type_in_backward(target, word)
        if unpacked is not None and unpacked != a.cpp_type:
            text += f"\n\nIn this backward formula its C++ type is `{unpacked}` (as the node saves it)."
        return text
    o = _output(f, word, profile)
    if o is not None:
        text = f"output {o.index} `{o.name}`: `{o.schema_type}` — C++ `{o.cpp_type}`"
        if kr is not None and kr.kind == "backward":
            text += "\n\nSaved by the node (outputs used in backward formulas are saved)."
        return text
    for suffix, what in (("_p", "primal (value)"), ("_t", "tangent")):
        if word.endswith(suffix):
            a = _arg(f, word[: -len(suffix)], profile)
            if a is not None:
                return f"`{word}`: the {what} of the input {_arg_line(a)}"
    if word in KNOWN_WORDS:
        return KNOWN_WORDS[word]
    return None


__all__ = ["CALL_KINDS", "KNOWN_WORDS", "HoverInfo", "describe", "describe_call", "file_uri", "hover", "plain"]
