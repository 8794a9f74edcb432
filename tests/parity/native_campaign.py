"""A seeded campaign of native_functions.yaml / tags.yaml mistakes, judged by a release's own torchgen.

Data-driven: `MUTATIONS` are edits of a release's shipped files (an entry found by its first line, a text
in it replaced). `judge` runs that release's torchgen (`parse_tags_yaml` + `parse_native_yaml` + the view
grouping load_derivatives does) on each mutated file, in one subprocess with only that release's
`torchgen/` on the path; `derivls_problems` is what derivls reports there. tests/parity/test_native_campaign.py
runs it for the installed torch (2.13) in the default run, and for every release under the `releases` mark.

Only the tests run torchgen; derivls never imports it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutation:
    """Replace `old` by `new` in the entry whose first line starts with `anchor` (of `file`). The mistake is
    on the first line at or after the anchor that holds `mark` (default: `new`'s first line)."""

    id: str
    anchor: str
    old: str
    new: str
    mark: str | None = None
    file: str = "native"  # or "tags"


_ABS = "- func: abs(Tensor self) -> Tensor"
_ABS_ = "- func: abs_(Tensor(a!) self) -> Tensor(a!)"
_ABS_OUT = "- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"
_ACOS = "- func: acos(Tensor self) -> Tensor"
_ACOS_OUT = "- func: acos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"
_ARCCOS = "- func: arccos(Tensor self) -> Tensor"
_ADD = "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
_ADD_OUT = "- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
_DROPOUT = "- func: dropout(Tensor input, float p, bool train) -> Tensor"
_RELU = "- func: relu(Tensor self) -> Tensor"
_FOREACH = "- func: _foreach_add.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]"
_TRANSPOSE_ = "- func: transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)"
_TRANSPOSE_COPY = "- func: transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor"
_AVG_POOL1D = "- func: avg_pool1d("
_CAT_OUT = "- func: cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)"
_VIEW_COPY_TAG = "- tag: view_copy"
_DESC = """  desc: |
          This tag indicates operators that are *_copy* variants"""


def _insert(name: str, text: str) -> Mutation:
    """A new entry before relu's."""
    return Mutation(name, _RELU, _RELU, text.rstrip("\n") + "\n\n" + _RELU, mark=text.split("\n")[0])


MUTATIONS: tuple[Mutation, ...] = (
    # the schema
    Mutation("type-misspelled", _ABS, "abs(Tensor self)", "abs(Tensr self)", mark="Tensr"),
    Mutation("type-misspelled-optional", _ADD, "Scalar alpha=1) -> Tensor", "Scalr? alpha=1) -> Tensor", "Scalr"),
    Mutation("schema-without-return", _ABS, "abs(Tensor self) -> Tensor", "abs(Tensor self)"),
    Mutation("inplace-not-returning-self", _ABS_, "self) -> Tensor(a!)", "self) -> Tensor", "abs_("),
    Mutation(
        "out-argument-not-written", _ABS_OUT, "Tensor(a!) out) -> Tensor(a!)", "Tensor out) -> Tensor(a!)", "abs.out"
    ),
    Mutation("python-keyword-argument", _DROPOUT, "float p,", "float lambda,", "lambda"),
    Mutation("two-namespace-levels", _RELU, "- func: relu(", "- func: a::b::relu(", "a::b::relu"),
    Mutation("bad-default", _DROPOUT, "float p,", "float p=x[,", "p=x["),
    Mutation("mutable-before-self", _ABS_, "abs_(Tensor(a!) self)", "abs_(Tensor(b!) other, Tensor(a!) self)", "abs_("),
    # the entry's keys and values
    Mutation(
        "key-given-twice",
        _ABS,
        "  variants: function, method\n",
        "  variants: function, method\n  variants: method\n",
        "variants: method",
    ),
    Mutation(
        "dispatch-key-given-twice",
        _ABS_OUT,
        "    CPU, CUDA, MPS, MTIA: abs_out\n",
        "    CPU, CUDA, MPS, MTIA: abs_out\n    CPU, CUDA, MPS, MTIA: abs_out\n",
        "CPU, CUDA, MPS, MTIA: abs_out\n    CPU",
    ),
    Mutation("unknown-field", _ABS, "  device_check: NoCheck", "  device_chek: NoCheck", "device_chek"),
    Mutation("unknown-variant", _ABS, "variants: function, method", "variants: function, methd", "methd"),
    Mutation("unknown-device-check", _ABS, "device_check: NoCheck", "device_check: NoChek", "NoChek"),
    Mutation("unknown-tag", _ABS, "tags: [core, pointwise]", "tags: [core, pointwize]", "pointwize"),
    Mutation(
        "unknown-dispatch-key",
        _ABS,
        "CompositeExplicitAutograd: abs",
        "CompositeExplicitAutogrd: abs",
        "CompositeExplicitAutogrd",
    ),
    Mutation(
        "unsupported-dispatch-key",
        _ABS_OUT,
        "CPU, CUDA, MPS, MTIA: abs_out",
        "CPU, CUDA, MPS, MTIA, Vulkan: abs_out",
        "Vulkan",
    ),
    Mutation(
        "not-a-bool", _ABS, "  device_check: NoCheck", "  device_guard: Flase\n  device_check: NoCheck", "device_guard"
    ),
    Mutation("variants-not-a-string", _ABS, "variants: function, method", "variants: [function, method]", "variants"),
    Mutation(
        "cpp-no-default-args-not-a-list",
        _ADD,
        "  device_check: NoCheck",
        "  cpp_no_default_args: alpha\n  device_check: NoCheck",
        "cpp_no_default_args",
    ),
    Mutation(
        "cpp-no-default-args-invalid",
        _ADD,
        "  device_check: NoCheck",
        "  cpp_no_default_args: ['beta']\n  device_check: NoCheck",
        "beta",
    ),
    Mutation(
        "out-with-method-variant",
        _ABS_OUT,
        "  device_check: NoCheck",
        "  variants: function, method\n  device_check: NoCheck",
        "variants",
    ),
    Mutation(
        "python-module-method",
        _ABS,
        "  device_check: NoCheck",
        "  python_module: nn\n  device_check: NoCheck",
        "variants",
    ),
    Mutation("foreach-device-check", _FOREACH, "device_check: NoCheck", "device_check: ExactSame", "device_check"),
    Mutation(
        "seeded-tag-missing",
        _DROPOUT,
        "tags: [nondeterministic_seeded, maybe_aliasing_or_mutating]",
        "tags: [maybe_aliasing_or_mutating]",
        "tags",
    ),
    Mutation(
        "inplace-view-not-inplace",
        _ARCCOS,
        "  variants: function, method",
        "  variants: function, method\n  tags: inplace_view",
        "inplace_view",
    ),
    Mutation(
        "const-ref-on-out",
        _ABS_OUT,
        "  device_check: NoCheck",
        "  use_const_ref_for_mutable_tensors: True\n  device_check: NoCheck",
        "use_const_ref",
    ),
    # dispatch tables
    Mutation(
        "manual-registration-with-dispatch",
        _ABS,
        "  device_check: NoCheck",
        "  manual_kernel_registration: True\n  device_check: NoCheck",
        "dispatch:",
    ),
    Mutation(
        "redundant-implicit-dispatch",
        _DROPOUT,
        "  tags: [nondeterministic_seeded, maybe_aliasing_or_mutating]",
        "  dispatch:\n    CompositeImplicitAutograd: dropout\n  tags: [nondeterministic_seeded, maybe_aliasing_or_mutating]",
        "dispatch:",
    ),
    Mutation(
        "implicit-kernel-misnamed",
        _DROPOUT,
        "  tags: [nondeterministic_seeded, maybe_aliasing_or_mutating]",
        "  dispatch:\n    CompositeImplicitAutograd: my_dropout\n  tags: [nondeterministic_seeded, maybe_aliasing_or_mutating]",
        "my_dropout",
    ),
    Mutation(
        "two-composites",
        _ABS,
        "    CompositeExplicitAutograd: abs\n",
        "    CompositeExplicitAutograd: abs\n    CompositeImplicitAutograd: abs_impl\n",
        "dispatch:",
    ),
    _insert("factory-without-dispatch", "- func: new_thing(Tensor self) -> Tensor"),
    # structured kernels
    Mutation("structured-on-functional", _ACOS, "  structured_delegate: acos.out", "  structured: True", "structured:"),
    Mutation(
        "structured-delegate-missing",
        _ACOS,
        "structured_delegate: acos.out",
        "structured_delegate: acos.outt",
        "acos.outt",
    ),
    Mutation(
        "structured-delegate-unstructured",
        _ARCCOS,
        "  variants: function, method",
        "  variants: function, method\n  structured_delegate: abs.out",
        "abs.out",
    ),
    Mutation(
        "structured-delegate-on-out",
        _ACOS_OUT,
        "  structured: True",
        "  structured_delegate: asin.out",
        "structured_delegate",
    ),
    Mutation(
        "structured-device-guard",
        _ACOS_OUT,
        "  structured: True",
        "  structured: True\n  device_guard: False",
        "device_guard",
    ),
    Mutation(
        "structured-delegate-with-cpu",
        _ACOS,
        "  tags: [core, pointwise]",
        "  dispatch:\n    CPU: acos_cpu\n  tags: [core, pointwise]",
        "CPU",
    ),
    Mutation(
        "inherits-without-structured",
        _ABS_OUT,
        "  device_check: NoCheck",
        "  structured_inherits: TensorIteratorBase\n  device_check: NoCheck",
        "structured_inherits",
    ),
    Mutation("ufunc-not-structured", _ADD_OUT, "  structured: True\n", "", "ufunc_inner_loop"),
    Mutation(
        "ufunc-dtype-misspelled",
        _ADD_OUT,
        "Generic: add (AllAndComplex,",
        "Generic: add (AllAndComplx,",
        "AllAndComplx",
    ),
    Mutation(
        "ufunc-key-misspelled", _ADD_OUT, "    ScalarOnly: add (Bool)", "    ScalarOnli: add (Bool)", "ScalarOnli"
    ),
    Mutation(
        "ufunc-with-cpu-kernel",
        _ADD_OUT,
        "    SparseCPU, SparseMeta: add_out_sparse_cpu\n",
        "    SparseCPU, SparseMeta: add_out_sparse_cpu\n    CPU: add_cpu\n",
        "CPU: add_cpu",
    ),
    Mutation("precomputed-misformed", _CAT_OUT, "  - dim -> int dim,", "  - dim -> int  dim,", "- dim ->"),
    Mutation("precomputed-uppercase", _CAT_OUT, "  - dim -> int dim,", "  - dim -> int DIM,", "DIM"),
    Mutation("precomputed-not-structured", _CAT_OUT, "  structured: True\n", "", "precomputed"),
    # generated functions, view groups
    _insert(
        "lone-out-operator",
        "- func: lonely.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: lonely_out",
    ),
    _insert(
        "no-out-variant-possible",
        "- func: my_count(Tensor self) -> int\n  autogen: my_count.out\n  dispatch:\n    CPU: my_count",
    ),
    Mutation("overload-declared-twice", _ABS_OUT, _ABS_OUT, _ABS_ + "\n  variants: method\n\n" + _ABS_OUT, "abs_("),
    Mutation("view-copy-tag-missing", _TRANSPOSE_COPY, "  tags: view_copy\n", "", "transpose_copy"),
    Mutation("yaml-syntax", _ABS, "tags: [core, pointwise]", "tags: [core, pointwise", "tags"),
    # what torchgen accepts: nothing may be flagged
    Mutation("ok-variants-reordered", _ABS, "variants: function, method", "variants: method, function", "variants"),
    Mutation(
        "ok-tags-as-string",
        _ARCCOS,
        "  variants: function, method",
        "  variants: function, method\n  tags: core",
        "tags",
    ),
    Mutation(
        "ok-dispatch-keys-split",
        _ABS_OUT,
        "    CPU, CUDA, MPS, MTIA: abs_out\n",
        "    CPU, CUDA: abs_out\n    MPS, MTIA: abs_out\n",
        "CPU",
    ),
    Mutation("ok-autogen-added", _AVG_POOL1D, "  tags: core\n", "  tags: core\n  python_module: nn\n", "python_module"),
    Mutation("ok-comment", _ABS, "  variants: function, method", "  variants: function, method  # both", "variants"),
    # tags.yaml
    Mutation(
        "tag-description-empty",
        _VIEW_COPY_TAG,
        _DESC,
        '  desc: ""\n  detail: |\n          This tag indicates',
        "desc",
        "tags",
    ),
    Mutation(
        "tag-description-missing",
        _VIEW_COPY_TAG,
        _DESC,
        "  detail: |\n          This tag indicates",
        "- tag: view_copy",
        "tags",
    ),
    Mutation(
        "tag-key-given-twice",
        _VIEW_COPY_TAG,
        "- tag: view_copy\n",
        "- tag: view_copy\n  tag: view_copy2\n",
        "tag: view_copy2",
        "tags",
    ),
    Mutation(
        "ok-tag-description-null",
        _VIEW_COPY_TAG,
        _DESC,
        "  desc:\n  detail: |\n          This tag indicates",
        "desc",
        "tags",
    ),
)


def apply(m: Mutation, native: str, tags: str) -> tuple[str, str, int]:
    """(native text, tags text, 1-based line of the mistake) after the mutation."""
    text = native if m.file == "native" else tags
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(m.anchor)]
    assert len(starts) == 1, f"{m.id}: anchor {m.anchor!r} found {len(starts)} times"
    start = sum(len(line) + 1 for line in lines[: starts[0]])
    end = text.find("\n- ", start + 1)
    end = len(text) if end < 0 else end
    entry = text[start:end]
    assert m.old in entry, f"{m.id}: {m.old!r} is not in the entry"
    text = text[:start] + entry.replace(m.old, m.new, 1) + text[end:]
    mark = m.mark or m.new.strip().split("\n")[0]
    at = text.find(mark, start)
    assert at >= 0, f"{m.id}: {mark!r} is not in the mutated text"
    line = text.count("\n", 0, at + mark.rfind("\n") + 1) + 1  # (a mark over lines: its last line)
    return (text, tags, line) if m.file == "native" else (native, text, line)


_JUDGE = r"""
import json, sys, yaml
from torchgen.gen import LineLoader, parse_native_yaml_struct, parse_tags_yaml_struct, get_grouped_by_view_native_functions
cases = json.load(open(sys.argv[1]))
out = []
for native, tags in cases:
    try:
        valid = parse_tags_yaml_struct(yaml.load(tags, Loader=LineLoader), path="tags.yaml")
        parsed = parse_native_yaml_struct(yaml.load(native, Loader=LineLoader), valid, path="native_functions.yaml")
        get_grouped_by_view_native_functions(parsed.native_functions)
        out.append(None)
    except BaseException as e:
        out.append(f"{type(e).__name__}: {e}"[:500])
print(json.dumps(out))
"""


def judge(torchgen_root: Path, cases: list[tuple[str, str]]) -> list[str | None]:
    """That torchgen's verdict on each (native, tags) text: None (accepted) or its error."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "cases.json"
        data.write_text(json.dumps(cases), encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=str(torchgen_root))
        run = subprocess.run(
            [sys.executable, "-c", _JUDGE, str(data)], capture_output=True, text=True, env=env, cwd=tmp, timeout=1800
        )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def derivls_problems(native: str, tags: str, rules: object) -> list[tuple[str, int, str]]:
    """(file, line, code) of every error derivls reports in the files, when their release is known."""
    from derivls.aten.native import NativeIndex, NativeIndexError

    try:
        index = NativeIndex.from_text(
            native,
            tags,
            "native_functions.yaml",
            tags_path="tags.yaml",
            rules=rules,  # type: ignore[arg-type]
        )
    except NativeIndexError as e:
        return [("tags" if e.path == "tags.yaml" else "native", e.line or 0, "native-yaml")]
    return [("tags" if p.path == "tags.yaml" else "native", p.line, p.code) for p in index.rejected]
