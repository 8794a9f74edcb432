"""Random mutations of the shipped 2.13 native_functions.yaml, judged by the installed torchgen: derivls's
schema parser and its per-entry reader accept exactly what torchgen's FunctionSchema.parse and
NativeFunction.from_yaml accept (seeded: the same cases every run)."""

from __future__ import annotations

import random
import re

import yaml

from derivls.aten.native_incremental import EntryChecker, split_entries
from derivls.aten.schema import FunctionSchema
from derivls.derivatives.releases import NEWEST
from tests.releases.matrix import installed_site

TOKENS = ["Tensor", "Tensor(a)", "Tensor(a!)", "Tensor(b!)", "Tensor?", "int", "int[]", "int[2]", "SymInt", "SymInt[]",
          "Scalar", "bool", "float", "str", "ScalarType?", "Generator?", "*", ",", "(", ")", "->", "=None", "=1", "=[]",
          "self", "out", "from", "other", "Tensr", "-> ()", "(a -> *)", "Tensor[]", "Tensor(a!)[]", "?", "!", ".", " "]  # fmt: skip
LINES = ["  variants: function", "  variants: method", "  variants: methods", "  device_check: NoCheck",
         "  device_check: Nocheck", "  device_guard: False", "  device_guard: yes", "  structured: True",
         "  structured_delegate: add.out", "  structured_inherits: TensorIteratorBase", "  manual_kernel_registration: True",
         "  manual_cpp_binding: True", "  python_module: nn", "  tags: core", "  tags: [core, pointwise]", "  tags: [cor]",
         "  tags: []", "  tags: nondeterministic_seeded", "  dispatch:\n    CPU: foo",
         "  dispatch:\n    CompositeExplicitAutograd: foo", "  dispatch:\n    CompositeImplicitAutograd: foo",
         "  dispatch:\n    CUDA, CPU: foo", "  dispatch:\n    Vulkan: foo", "  dispatch:\n    CPU: a::b::c::d::foo",
         "  dispatch:\n    CPU:", "  autogen: foo.out", "  autogen: foo.out,bar.out", "  cpp_no_default_args: ['dim']",
         "  cpp_no_default_args: dim", "  use_const_ref_for_mutable_tensors: True", "  precomputed:\n  - dim -> int dim",
         "  precomputed:\n  - dim -> int DIM", "  ufunc_inner_loop:\n    Generic: add (All)", "  ufunc_inner_loop:\n    Generics: add (All)",
         "  variants: function,method", "  device_check: [NoCheck]", "  dispatch: CPU", "  dispatch:\n    CPU: foo\n    CPU: bar",
         "  tags: inplace_view", "  func: x(Tensor self) -> Tensor"]  # fmt: skip


def _packaged() -> tuple[str, str]:
    site = installed_site()
    assert site is not None, "the tests need the installed torch (torchgen)"
    native = site / "torchgen" / "packaged" / "ATen" / "native"
    return (native / "native_functions.yaml").read_text(encoding="utf-8"), (native / "tags.yaml").read_text(
        encoding="utf-8"
    )


def test_the_schema_parser_accepts_exactly_what_torchgen_accepts():
    from torchgen.model import FunctionSchema as TorchgenSchema

    text, _ = _packaged()
    schemas = [s for s in re.findall(r"^- func: (.*)$", text, re.M) if "::" not in s]
    rnd = random.Random(1)
    disagreements = []
    for _ in range(10000):
        s = rnd.choice(schemas)
        at = rnd.randrange(len(s) + 1)
        s = s[:at] + rnd.choice(TOKENS) + s[at:] if rnd.random() < 0.5 else s[:at] + s[at + rnd.randrange(1, 8) :]
        try:
            TorchgenSchema.parse(s)
            theirs = True
        except Exception:
            theirs = False
        try:
            FunctionSchema.parse(s)
            ours = True
        except ValueError:
            ours = False
        if ours != theirs:
            disagreements.append((s, theirs))
    assert disagreements == []


def test_each_entry_is_rejected_exactly_when_native_function_from_yaml_rejects_it():
    from torchgen.gen import LineLoader, parse_tags_yaml_struct
    from torchgen.model import Location, NativeFunction

    text, tags_text = _packaged()
    tags = parse_tags_yaml_struct(yaml.load(tags_text, Loader=LineLoader))
    chunks = [c for _, c in split_entries(text) if c.startswith("- ")]
    checker = EntryChecker("native_functions.yaml", set(tags), NEWEST.native)
    rnd = random.Random(2)
    disagreements = []
    rejected = 0
    for _ in range(3000):
        lines = rnd.choice(chunks).rstrip("\n").split("\n")
        op = rnd.random()
        if op < 0.5:
            lines.insert(rnd.randrange(1, len(lines) + 1), rnd.choice(LINES))
        elif op < 0.8 and len(lines) > 1:
            lines[rnd.randrange(1, len(lines))] = rnd.choice(LINES)
        elif len(lines) > 1:
            del lines[rnd.randrange(1, len(lines))]
        entry = "\n".join(lines) + "\n"
        try:
            NativeFunction.from_yaml(yaml.load(entry, Loader=LineLoader)[0], Location("native_functions.yaml", 1), tags)
            theirs = True
        except Exception:
            theirs = False
            rejected += 1
        ours = not checker._read(entry)
        if ours != theirs:
            disagreements.append((entry, theirs))
    assert disagreements == [] and rejected > 1000
