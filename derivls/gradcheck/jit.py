"""The JIT fast path: the extension's code compiled inside the live session by Cling (cppyy), not by g++.

The session (the child's `jit-init`, child/jit.py) loads libtorch with RTLD_GLOBAL, a library of jump stubs to
the FunctionsManual helpers libtorch does not export (build.helpers_library: the g++ path's stubs, exported), parses
the precompiled header's includes once and defines PRELUDE. Each run then sends `jit_source(rendered, ns)`: the
same rendered code as the g++ extension (the node, its apply, the forward blocks, the harness around them) with

- every derivls namespace renamed to a fresh one per source (Cling cannot define a name twice), the namespace of
  the edited FunctionsManual.cpp helpers too (derivls.gradcheck.manual's `derivls_manual_<hash>`, named by the
  helpers' text: an edited formula calling the same edited helper would define it again);
- the compiled-autograd methods' bodies (`compiled_args`, `apply_with_saved`, `*_apply_functional_ivalue`)
  left out: torch.compile's path, never run by a gradcheck, and a third of the time to define a node;
- the ops registered boxed through PRELUDE's `derivls_jit::op` (each argument unboxed by
  `c10::impl::ivalue_to_arg`, as TORCH_FN's wrapper does) instead of TORCH_LIBRARY, whose wrappers cost
  ~0.2 s of JIT a library.

A source Cling rejects is never the user's error: the run takes the g++ path, whose compiler is the judge.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from derivls.gradcheck.source import Registered, Rendered

# Cling's optimization level (its `.O`): the JIT's code runs a few small gradchecks, never long enough for -O2's
# code to pay for its longer JIT compile (bench_session.py, same load: edited acos 2.89 -> 2.03 s, with its sign
# dropped and the repairs tried 6.87 -> 3.82 s)
OPTIMIZATION = 0

# defined once in the session: a library per namespace, ops registered as boxed CompositeImplicitAutograd kernels
PRELUDE = r"""
namespace derivls_jit {
struct Boxed final : public c10::OperatorKernel {
  explicit Boxed(void (*f)(torch::jit::Stack*)) : fn(f) {}
  void (*fn)(torch::jit::Stack*);
  void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, torch::jit::Stack* s) { fn(s); }
};
inline std::vector<std::unique_ptr<torch::Library>>& libraries() {
  static std::vector<std::unique_ptr<torch::Library>> all;
  return all;
}
inline int library(const char* ns) {
  libraries().push_back(std::make_unique<torch::Library>(torch::Library::DEF, ns, std::nullopt, "derivls-jit", 0));
  return 0;
}
inline int op(const char* schema, const char* name, void (*fn)(torch::jit::Stack*)) {
  auto& lib = *libraries().back();
  lib.def(schema);
  lib.impl(name, torch::dispatch(c10::DispatchKey::CompositeImplicitAutograd,
      torch::CppFunction::makeFromBoxedFunctor(std::make_unique<Boxed>(fn))));
  return 0;
}
}  // namespace derivls_jit
"""

PCH_LINE = re.compile(r'^#include "derivls-autograd\.h"\n', re.MULTILINE)
# the namespace derivls.gradcheck.manual.manual_code gives the edited helpers (inside torch::...::details)
MANUAL_NAMESPACE = re.compile(r"\bderivls_manual_\w+\b")
# the compiled-autograd methods of a node (Functions.cpp's shape since 2.5): a definition from its head to the
# first `}` in column 0
COMPILED_AUTOGRAD = re.compile(
    r"^((?:void \w+::compiled_args\(CompiledNodeArgs& args\) const"
    r"|variable_list \w+::apply_with_saved\(const variable_list& grads, SwapSavedVariables& saved\)"
    r"|inline variable_list \w+_apply_functional_ivalue\([^)]*\)\n?)\s*\{)\n.*?^\}\n",
    re.MULTILINE | re.DOTALL,
)
LEFT_OUT = ' TORCH_CHECK(false, "derivls gradcheck: compiled autograd is not part of the check"); }\n'


def namespace(rendered: Rendered) -> str:
    """The session's name for this source: the same source is defined once per session process."""
    return "derivls_jit_" + hashlib.sha256(rendered.source.encode()).hexdigest()[:20]


def jit_source(rendered: Rendered, ns: str, includes: list[str], roots: Sequence[Path]) -> str:
    """The code the session defines for `rendered`, in namespace `ns` (also its op library's name). It passes the
    gate the g++ build passes (compile/safety.py, `roots`: the include folders of the torch the session loaded)
    before anything reaches Cling: RefusedSource (a SetupError) else."""
    from derivls.compile.safety import checked_source

    text = PCH_LINE.sub("", rendered.source)
    text = text[: text.index("TORCH_LIBRARY(")]
    # the file-level helpers of Functions.cpp's head (compute_output_metadata, ...) go into the fresh namespace
    head = re.search(r"^namespace torch::autograd::generated \{\n", text, re.MULTILINE)
    if head is not None:
        inner = text.index("namespace derivls_gradcheck {\n", head.end())
        text = (
            text[: head.end()]
            + "namespace derivls_gradcheck {\n"
            + text[head.end() : inner]
            + text[inner + len("namespace derivls_gradcheck {\n") :]
        )
    text = COMPILED_AUTOGRAD.sub(lambda m: m.group(1) + LEFT_OUT, text)
    text = re.sub(r"\bderivls_gradcheck\b", ns, text)
    text = MANUAL_NAMESPACE.sub(f"{ns}_manual", text)
    adapters = "".join(_adapter(op, ns) for op in rendered.ops)
    registrations = "".join(
        f'  derivls_jit::op("{op.schema}", "{op.name}", &{op.name}_boxed),\n' for op in rendered.ops
    )
    source = (
        "".join(f"#include {line}\n" for line in includes)
        + text
        + f"namespace {ns}_boxed {{\n{adapters}"
        + f'static int registered = (derivls_jit::library("{ns}"),\n{registrations}  0);\n'
        + f"}} // namespace {ns}_boxed\n"
    )
    return checked_source(source, roots, "the JIT source (torchgen's templates/Functions.cpp beside the file is in it)")


def _adapter(op: Registered, ns: str) -> str:
    n = len(op.params)
    args = ", ".join(
        f"c10::impl::ivalue_to_arg<std::decay_t<{t}>, false>::call(st[n - {n - i}])" for i, t in enumerate(op.params)
    )
    function = re.sub(r"\bderivls_gradcheck\b", ns, op.function)
    return (
        f"static void {op.name}_boxed(torch::jit::Stack* s) {{\n"
        "  auto& st = *s;\n"
        "  size_t n = st.size();\n"
        f"  auto r = {function}({args});\n"
        f"  torch::jit::drop(st, {n});\n"
        "  st.emplace_back(std::move(r));\n"
        "}\n"
    )


def includes(pch_header: str) -> list[str]:
    """The precompiled header's includes (`"torch/..."`, `<ATen/...>`): what the session parses once."""
    return [m.group(1) for m in re.finditer(r"^#include\s+([\"<][^\">]+[\">])", pch_header, re.MULTILINE)]


def init_request(python: str, cache: Path | None = None) -> dict[str, Any]:
    """The session's `jit-init`: the chosen torch's libraries, the helper stubs (built once, cached), its include
    folders and the headers the build's precompiled header includes (its own torchgen templates'). Raises
    SetupError (no torch, no compiler, not x86-64 ELF)."""
    from derivls.compile.file_templates import Templates
    from derivls.compile.safety import checked_source
    from derivls.compile.toolchain import SetupError, find_compiler
    from derivls.gradcheck import build as building
    from derivls.gradcheck.runner import torch_folder

    folder = torch_folder(python)
    if folder is None:
        raise SetupError(f"{python} has no torch")
    lib, include = folder / "lib", folder / "include"
    libraries = [lib / name for name in ("libc10.so", "libtorch_cpu.so", "libtorch.so")]
    if not all(p.is_file() for p in libraries) or not include.is_dir():
        raise SetupError(f"torch's libraries or headers not found in {folder}")
    helpers = building.helpers_library(lib, find_compiler(None), cache)
    roots = [include, include / "torch" / "csrc" / "api" / "include"]
    derivatives = folder.parent / "torchgen" / "packaged" / "autograd" / "derivatives.yaml"
    headers = includes(building.pch_header(Templates(derivatives))) if derivatives.is_file() else []
    checked_source("".join(f"#include {h}\n" for h in headers), roots, "the JIT's headers", own=())
    return {
        "op": "jit-init",
        "libraries": [str(p) for p in [*libraries, helpers]],
        "include_dirs": [str(p) for p in roots],
        "includes": headers or list(DEFAULT_INCLUDES),
        "prelude": PRELUDE,
        "optimization": OPTIMIZATION,
        "warmup": warmup(derivatives, headers, roots) if headers else "",
    }


def warmup(derivatives: Path, headers: list[str], roots: Sequence[Path], op: str = "acos") -> str:
    """The JIT source of one node of torch's own derivatives.yaml (acos): defined once when the session starts, it
    instantiates the templates every node uses (the first definition takes ~2 s, the next ones ~0.4 s), and
    proves the JIT works before any edit relies on it. "" when it cannot be rendered."""
    from derivls.compile.file_templates import Templates
    from derivls.compile.units import collect_units
    from derivls.gradcheck import build as building
    from derivls.gradcheck.source import render
    from derivls.project.analyse import analyse_path

    native = derivatives.parent.parent / "ATen" / "native" / "native_functions.yaml"
    analysis, _ = analyse_path(derivatives, native, native.with_name("tags.yaml"))
    if analysis is None:
        return ""
    rendered = render(collect_units(analysis, [op]), building.LIBRARY_PLACEHOLDER, Templates(derivatives))
    if not rendered.plans:
        return ""
    return jit_source(rendered, "derivls_jit_warmup", headers, roots)


DEFAULT_INCLUDES = (
    '"torch/csrc/autograd/FunctionsManual.h"',
    '"torch/csrc/autograd/VariableTypeUtils.h"',
    "<torch/library.h>",
)
