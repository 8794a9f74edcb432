"""One set of rules per PyTorch release family, and how derivls picks the one a workspace needs.

derivls follows torchgen exactly, and torchgen changes between releases in a few small ways, worked
out by diffing each release's torchgen against 2.13's (docs/releases.md has the table):

- native_functions.yaml (`ReleaseRules.native`, an aten-level `NativeRules`): `Dimname` until 2.12,
  `SymBool`/`GraphModule` from 2.5, the DispatchKey names of each release, the tags torchgen adds
  itself (none in 2.1, `pt2_compliant_tag` from 2.2, `out`/`inplace` from 2.13), the out= const-ref
  check from 2.7, C++ optionals spelled `c10::optional` until 2.3;
- load_derivatives (`loader`): the spelling of two substitutions, and no `sym_numel` rule in 2.1;
- gen_autograd_functions (`node_self`, `codegen_templates`, `codegen_legacy_indent`,
  `codegen_rewrites`): `getptr()` from 2.13, the templates of 2.1-2.5 / 2.6 / 2.7+, CodeTemplate's
  indentation before 2.8, and two rewrites for 2.1-2.4.

The matrix in tests/releases checks each release's own torchgen against derivls on its own files.
Families share values where releases agree; a new release is a new `_family(...)` line.

Detection (`detect`), first match wins: an explicit setting (`--torch-version`); a checkout's
`version.txt`; a wheel's `torch/version.py` beside `torchgen/`; what native_functions.yaml contains
(`Dimname` → the newest family that knows it); else the newest rules.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from derivls.aten.native_rules import NativeRules
from derivls.base.frozen import frozen_dataclass
from derivls.base.limits import read_regular_file
from derivls.derivatives.saved import STRING_VIEW_CAST, TORCHGEN_REPLACEMENTS, Replacement

__all__ = [
    "FAMILIES",
    "NEWEST",
    "Detected",
    "ReleaseRules",
    "detect",
    "parse_version",
    "rules_for_version",
    "rules_of",
]

# torchgen.model.DispatchKey of 2.13 (names and aliases), from which the other releases differ a little
_DISPATCH_KEYS_2_13 = frozenset(
    """
    ADInplaceOrView Autocast AutocastCPU AutocastCUDA AutocastXPU Autograd AutogradCPU AutogradCUDA
    AutogradFunctionality AutogradHIP AutogradHPU AutogradIPU AutogradLazy AutogradMPS AutogradMTIA AutogradMeta
    AutogradNestedTensor AutogradOther AutogradPrivateUse1 AutogradPrivateUse2 AutogradPrivateUse3 AutogradVE
    AutogradXLA AutogradXPU BackendSelect Batched BatchedNestedTensor CPU CUDA CatchAll CompositeExplicitAutograd
    CompositeExplicitAutogradNonFunctional CompositeImplicitAutograd CompositeImplicitAutogradNestedTensor Conjugate
    CustomRNGKeyId Dense FPGA FuncTorchBatched FuncTorchBatchedDecomposition FuncTorchDynamicLayerBackMode
    FuncTorchDynamicLayerFrontMode FuncTorchGradWrapper FuncTorchVmapMode Functionalize HIP HPU IDEEP IPU Lazy MAIA
    MKLDNN MPS MTIA Meta Metal MkldnnCPU Named Negative NestedTensor NestedTensorCPU NestedTensorCUDA
    NestedTensorHIP NestedTensorHPU NestedTensorIPU NestedTensorLazy NestedTensorMPS NestedTensorMTIA
    NestedTensorMeta NestedTensorPrivateUse1 NestedTensorPrivateUse2 NestedTensorPrivateUse3 NestedTensorVE
    NestedTensorXLA NestedTensorXPU OpenCL OpenGL PreDispatch PrivateUse1 PrivateUse2 PrivateUse3 Python
    PythonDispatcher PythonTLSSnapshot QuantizedCPU QuantizedCUDA QuantizedHIP QuantizedHPU QuantizedIPU
    QuantizedLazy QuantizedMPS QuantizedMTIA QuantizedMeta QuantizedPrivateUse1 QuantizedPrivateUse2
    QuantizedPrivateUse3 QuantizedVE QuantizedXLA QuantizedXPU Sparse SparseCPU SparseCUDA SparseCsr SparseCsrCPU
    SparseCsrCUDA SparseCsrHIP SparseCsrHPU SparseCsrIPU SparseCsrLazy SparseCsrMPS SparseCsrMTIA SparseCsrMeta
    SparseCsrPrivateUse1 SparseCsrPrivateUse2 SparseCsrPrivateUse3 SparseCsrVE SparseCsrXLA SparseCsrXPU SparseHIP
    SparseHPU SparseIPU SparseLazy SparseMPS SparseMTIA SparseMeta SparsePrivateUse1 SparsePrivateUse2
    SparsePrivateUse3 SparseVE SparseXLA SparseXPU TESTING_ONLY_GenericMode TESTING_ONLY_GenericWrapper Tracer
    Undefined VE VmapMode Vulkan XLA XPU ZeroTensor
    """.split()
)
# torchgen.model.dispatch_keys of 2.13: the keys a native_functions.yaml `dispatch:` may name
_SUPPORTED_2_13 = frozenset(
    """
    CPU SparseCPU SparseCsrCPU MkldnnCPU CUDA MPS XPU SparseXPU SparseCsrXPU SparseCUDA SparseCsrCUDA SparseMPS
    SparseCsrMPS QuantizedCPU QuantizedCUDA CompositeImplicitAutograd CompositeImplicitAutogradNestedTensor
    CompositeExplicitAutograd CompositeExplicitAutogradNonFunctional NestedTensorCPU NestedTensorCUDA NestedTensorXPU
    NestedTensorHPU Meta SparseMeta SparseCsrMeta QuantizedMeta NestedTensorMeta ZeroTensor MTIA
    """.split()
)
# ... and of the earlier releases (each adds keys; 2.8's family takes 2.9's two SparseMPS keys)
_SUPPORTED_2_1 = frozenset(
    """
    CPU CUDA CompositeExplicitAutograd CompositeExplicitAutogradNonFunctional CompositeImplicitAutograd
    CompositeImplicitAutogradNestedTensor MPS Meta MkldnnCPU NestedTensorCPU NestedTensorCUDA NestedTensorMeta
    QuantizedCPU QuantizedCUDA QuantizedMeta SparseCPU SparseCUDA SparseCsrCPU SparseCsrCUDA SparseMeta ZeroTensor
    """.split()
)
_SUPPORTED_2_3 = _SUPPORTED_2_1 | {"SparseCsrMeta"}
_SUPPORTED_2_5 = _SUPPORTED_2_3 | {"XPU"}
_SUPPORTED_2_6 = _SUPPORTED_2_5 | {"NestedTensorXPU", "SparseXPU"}
_SUPPORTED_2_7 = _SUPPORTED_2_6 | {"SparseCsrXPU"}
_SUPPORTED_2_8 = _SUPPORTED_2_7 | {"MTIA", "NestedTensorHPU", "SparseMPS", "SparseCsrMPS"}
# torchgen.model.STRUCTURED_DISPATCH_KEYS
_STRUCTURED_2_1 = frozenset({"CPU", "CUDA", "MPS"})
_STRUCTURED_2_5 = _STRUCTURED_2_1 | {"XPU"}
_SPARSE_CSR_BACKENDS = frozenset(
    "SparseCsr" + b for b in ("", "HIP", "HPU", "IPU", "Lazy", "MPS", "MTIA", "Meta", "PrivateUse1", "PrivateUse2")
) | {"SparseCsrPrivateUse3", "SparseCsrVE", "SparseCsrXLA", "SparseCsrXPU"}
_DK_2_4 = _DISPATCH_KEYS_2_13 - {"AutocastXPU"}
_DK_2_3 = (_DK_2_4 - {"AutocastCPU", "AutocastCUDA", "MAIA", "PythonDispatcher", "PythonTLSSnapshot"}) | {"ORT"}
_DK_2_2 = _DK_2_3 - {"PreDispatch"} - _SPARSE_CSR_BACKENDS
_DK_2_1 = _DK_2_2 - {"BatchedNestedTensor", "Conjugate", "Dense", "Negative", "NestedTensor"}

# load_derivatives' substitutions: 2.13's, with the C++ spelling of 2.4 and before (c10::optional),
# and 2.1 had no `self.sym_numel()` rule
_REPL_C10 = tuple(
    replace(
        r,
        expr=lambda name, _: (
            f"{name}.has_value() ? c10::optional<c10::SymIntArrayRef>({name}->sym_sizes()) : c10::nullopt"
        ),
    )
    if r.suffix == "_sym_sizes_opt"
    else r
    for r in TORCHGEN_REPLACEMENTS
)
_REPL_2_1 = tuple(r for r in _REPL_C10 if r.suffix != "_sym_numel")
_CAST_C10 = "{name}.has_value() ? c10::optional<c10::string_view>({name}.value()) : c10::nullopt"
_CAST_2_5 = "{name}.has_value() ? std::optional<c10::string_view>({name}.value()) : std::nullopt"
_LOADER_2_1 = (_REPL_2_1, _CAST_C10)
_LOADER_C10 = (_REPL_C10, _CAST_C10)
_LOADER_2_5 = (TORCHGEN_REPLACEMENTS, _CAST_2_5)
_LOADER_2_13 = (TORCHGEN_REPLACEMENTS, STRING_VIEW_CAST)

# gen_autograd_functions up to 2.4: a saved optional string is a c10::optional, and compiled_args collects
# SavedVariables without saying whether they are outputs
_CODEGEN_2_4 = (
    "shared_from_this()",
    "2.5",
    True,
    (
        (r"(?<!:)std::optional<std::string> ", "c10::optional<std::string> "),
        (r"args\.collect\((\w+), (?:true|false)\);", r"args.collect(\1);"),
    ),
)

_NO_SYMBOOL = frozenset({"SymBool", "GraphModule"})
_PT2_ONLY = frozenset({"pt2_compliant_tag"})


@frozen_dataclass(slots=True)
class ReleaseRules:
    """What one family of PyTorch releases does differently. One value per family (FAMILIES)."""

    family: str  # "2.5-2.12"
    first: tuple[int, int]  # the first minor release the family covers, (2, 5)
    last: tuple[int, int] | None  # the last one (None: and every later release)
    native: NativeRules
    # load_derivatives: (its saved-variable substitutions, how a saved optional string is passed on)
    loader: tuple[tuple[Replacement, ...], str] = _LOADER_2_13
    # gen_autograd_functions: how a node passes itself to SavedVariable::unpack (`getptr()` from 2.13)
    node_self: str = "getptr()"
    # its Functions.h/.cpp templates (a set of derivls.codegen.release_templates; "2.7": from 2.7 on)
    codegen_templates: str = "2.7"
    # torchgen's CodeTemplate kept the indentation of blank lines in indented blocks before 2.8
    codegen_legacy_indent: bool = False
    # (regex, replacement) rewrites of the generated text: what changed inside process_function's code
    codegen_rewrites: tuple[tuple[str, str], ...] = ()

    def render(self, cpp: str) -> str:
        """Generated C++ as derivls renders it (2.13) → as this release's torchgen renders it."""
        cpp = self.native.respell(cpp)
        if self.node_self != "getptr()":
            cpp = cpp.replace("getptr()", self.node_self)
        for pattern, replacement in self.codegen_rewrites:
            cpp = re.sub(pattern, replacement, cpp)
        return cpp

    @property
    def label(self) -> str:
        return f"torch {self.family} rules"

    def covers(self, version: tuple[int, int]) -> bool:
        return self.first <= version and (self.last is None or version <= self.last)


def _family(
    first: tuple[int, int],
    last: tuple[int, int] | None,
    loader: tuple[tuple[Replacement, ...], str] = _LOADER_2_13,
    codegen: tuple[str, str, bool, tuple[tuple[str, str], ...]] = ("shared_from_this()", "2.5", True, ()),
    **native: object,
) -> ReleaseRules:
    name = f"{first[0]}.{first[1]}"
    if last is None:
        name += "+"
    elif last != first:
        name += f"-{last[0]}.{last[1]}"
    label = f"torch {name}'s torchgen"
    return ReleaseRules(name, first, last, NativeRules(label=label, **native), loader, *codegen)  # type: ignore[arg-type]


FAMILIES: tuple[ReleaseRules, ...] = (
    _family((2, 1), (2, 1), _LOADER_2_1, _CODEGEN_2_4, accepts_dimname=True, absent_types=_NO_SYMBOOL, dispatch_keys=_DK_2_1,
            implicit_tags=frozenset(), const_ref_out=False, cpp_optional="c10::optional",
            supported_dispatch_keys=_SUPPORTED_2_1, structured_dispatch_keys=_STRUCTURED_2_1, python_keywords=False),
    _family((2, 2), (2, 2), _LOADER_C10, _CODEGEN_2_4, accepts_dimname=True, absent_types=_NO_SYMBOOL, dispatch_keys=_DK_2_2,
            implicit_tags=_PT2_ONLY, const_ref_out=False, cpp_optional="c10::optional",
            supported_dispatch_keys=_SUPPORTED_2_1, structured_dispatch_keys=_STRUCTURED_2_1, python_keywords=False),
    _family((2, 3), (2, 3), _LOADER_C10, _CODEGEN_2_4, accepts_dimname=True, absent_types=_NO_SYMBOOL, dispatch_keys=_DK_2_3,
            implicit_tags=_PT2_ONLY, const_ref_out=False, cpp_optional="c10::optional",
            supported_dispatch_keys=_SUPPORTED_2_3, structured_dispatch_keys=_STRUCTURED_2_1, python_keywords=False),
    _family((2, 4), (2, 4), _LOADER_C10, _CODEGEN_2_4, accepts_dimname=True, absent_types=_NO_SYMBOOL, dispatch_keys=_DK_2_4,
            implicit_tags=_PT2_ONLY, const_ref_out=False,
            supported_dispatch_keys=_SUPPORTED_2_3, structured_dispatch_keys=_STRUCTURED_2_1, python_keywords=False),
    _family((2, 5), (2, 5), _LOADER_2_5, accepts_dimname=True, dispatch_keys=_DK_2_4, implicit_tags=_PT2_ONLY,
            const_ref_out=False,
            supported_dispatch_keys=_SUPPORTED_2_5, structured_dispatch_keys=_STRUCTURED_2_5, python_keywords=False),
    _family((2, 6), (2, 6), codegen=("shared_from_this()", "2.6", True, ()), accepts_dimname=True, dispatch_keys=_DK_2_4, implicit_tags=_PT2_ONLY,
            const_ref_out=False, supported_dispatch_keys=_SUPPORTED_2_6, structured_dispatch_keys=_STRUCTURED_2_5),
    _family((2, 7), (2, 7), codegen=("shared_from_this()", "2.7", True, ()), accepts_dimname=True,
            dispatch_keys=_DK_2_4, implicit_tags=_PT2_ONLY,
            supported_dispatch_keys=_SUPPORTED_2_7, structured_dispatch_keys=_STRUCTURED_2_5),
    _family((2, 8), (2, 12), codegen=("shared_from_this()", "2.7", False, ()), accepts_dimname=True,
            dispatch_keys=_DK_2_4, implicit_tags=_PT2_ONLY, supported_dispatch_keys=_SUPPORTED_2_8),
    _family((2, 13), None, codegen=("getptr()", "2.7", False, ()), absent_types=frozenset({"Dimname"}),
            dispatch_keys=_DISPATCH_KEYS_2_13, supported_dispatch_keys=_SUPPORTED_2_13),
)  # fmt: skip
NEWEST = FAMILIES[-1]
NEWEST_CHECKED = (2, 15)  # the newest release the release matrix (tests/releases) checks


def rules_of(index: object) -> ReleaseRules:
    """The family whose native rules an index was read with (NEWEST for anything else)."""
    native = getattr(index, "rules", None)
    return next((r for r in FAMILIES if r.native is native), NEWEST)


_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str) -> tuple[int, int] | None:
    """'2.4.1+cu121' / '2.5.0a0' / '2.4' → (2, 4); None if it is not a version."""
    m = _VERSION.match(text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def rules_for_version(version: tuple[int, int]) -> tuple[ReleaseRules, str]:
    """The family of a release, and a note when the release is outside what derivls knows."""
    if version > NEWEST_CHECKED:
        return (
            NEWEST,
            f"; newer than every known release ({NEWEST_CHECKED[0]}.{NEWEST_CHECKED[1]}), so the newest rules",
        )
    for rules in FAMILIES:
        if rules.covers(version):
            return rules, ""
    if version < FAMILIES[0].first:
        return FAMILIES[0], f"; older than every known release, so the oldest rules ({FAMILIES[0].family})"
    return NEWEST, f"; newer than every known release, so the newest rules ({NEWEST.family})"


@frozen_dataclass(slots=True)
class Detected:
    rules: ReleaseRules
    reason: str  # "torch/version.py says 2.4.1"
    # the release is known (set, or read from version.txt / torch/version.py) and its rules are checked: what
    # they reject in native_functions.yaml is an error, not a feature of a newer release (docs/releases.md)
    known: bool = False

    def describe(self) -> str:
        return f"{self.rules.label} ({self.reason})"


def detect(
    requested: str | None, derivatives: Path | None = None, native: Path | None = None, native_text: str | None = None
) -> Detected:
    """Which rules to use, and why (see the module doc). Raises ValueError on a bad `requested`."""
    if requested and requested != "auto":
        version = parse_version(requested)
        if version is None:
            raise ValueError(f"'{requested}' is not a torch version (expected e.g. 2.4 or 2.4.1)")
        rules, note = rules_for_version(version)
        return Detected(rules, f"set to {requested}{note}", known=not note)
    for found in (_checkout_version(derivatives, native), _wheel_version(derivatives, native)):
        if found is not None:
            where, text = found
            version = parse_version(text)
            if version is not None:
                rules, note = rules_for_version(version)
                return Detected(rules, f"{where} says {text}{note}", known=not note)
    by_content = _from_content(native, native_text)
    if by_content is not None:
        return by_content
    return Detected(NEWEST, "no version found, so the newest")


def _read(path: Path) -> str | None:
    try:
        return read_regular_file(path, "version file", 1 << 20)
    except (OSError, UnicodeDecodeError):
        return None


def _checkout_version(derivatives: Path | None, native: Path | None = None) -> tuple[str, str] | None:
    """<root>/version.txt of a checkout: tools/autograd/derivatives.yaml, aten/src/ATen/native/…."""
    for path, layout in ((derivatives, ("tools", "autograd")), (native, ("aten", "src", "ATen", "native"))):
        if path is None:
            continue
        try:
            here = Path(path).resolve().parent
        except (OSError, RuntimeError):
            continue
        if here.parts[-len(layout) :] != layout:
            continue
        text = _read(here.parents[len(layout) - 1] / "version.txt")
        if text and text.strip():
            return "version.txt", text.strip()
    return None


_VERSION_PY = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)


def _wheel_version(derivatives: Path | None, native: Path | None) -> tuple[str, str] | None:
    """torch/version.py beside the torchgen/ that holds packaged/ (the files of an installed wheel)."""
    for path in (derivatives, native):
        if path is None:
            continue
        try:
            parts = Path(path).resolve().parts
        except (OSError, RuntimeError):
            continue
        for i in range(len(parts) - 1, 0, -1):
            if parts[i] == "packaged" and parts[i - 1] == "torchgen":
                site = Path(*parts[: i - 1])
                text = _read(site / "torch" / "version.py")
                m = _VERSION_PY.search(text or "")
                if m:
                    return "torch/version.py", m.group(1)
                break
    return None


def _from_content(native: Path | None, native_text: str | None) -> Detected | None:
    if native_text is None and native is not None and os.path.isfile(native):
        native_text = _read(native)
    if native_text and re.search(r"\bDimname\b", native_text):
        rules = max((r for r in FAMILIES if r.native.accepts_dimname), key=lambda r: r.first)
        return Detected(rules, "native_functions.yaml uses Dimname, dropped in 2.13")
    return None
