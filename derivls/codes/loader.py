"""Codes of the loader stage: what torchgen's load_derivatives (or the 2021 loader) refuses in an entry."""

from __future__ import annotations

from derivls.codes.model import LEGACY, TORCHGEN, Severity, Stage, declare

ERROR, WARNING, LOADER = Severity.ERROR, Severity.WARNING, Stage.LOADER

ABS = "- name: abs(Tensor self) -> Tensor\n"
ABS_RIGHT = ABS + "  self: grad * self.sgn()\n"
MAX_DIM = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n"

SCHEMA_NOT_FOUND = declare(
    "schema-not-found",
    ERROR,
    LOADER,
    "`name:` is no function of native_functions.yaml",
    what="""The schema after `name:` matches no function of native_functions.yaml (argument names, types and
    defaults count). The closest signatures are offered as quick fixes, closest first.""",
    why="""load_derivatives looks every entry up by its exact schema string and raises when it is missing.""",
    wrong="- name: abs(Tensor input) -> Tensor\n  input: grad * input.sgn()\n",
    right=ABS_RIGHT,
    fix="Replace the schema with one of the suggested ones.",
)

MISSING_NAME = declare(
    "missing-name",
    ERROR,
    LOADER,
    "an entry without `name:`",
    what="""An entry has no `name:` key, so nothing says which ATen function its formulas are for.""",
    why="""load_derivatives reads `name` first (a KeyError without it).""",
    wrong="- self: grad * self.sgn()\n",
    right=ABS_RIGHT,
)

NAME_NOT_STRING = declare(
    "name-not-string",
    ERROR,
    LOADER,
    "`name:` whose value is not a string",
    what="""The value of `name:` is not a string (a list, a mapping, a number).""",
    why="""load_derivatives parses `name` as a schema string and fails on anything else.""",
    wrong="- name: [abs]\n  self: grad * self.sgn()\n",
    right=ABS_RIGHT,
)

UNSUPPORTED_SCHEMA = declare(
    "unsupported-schema",
    ERROR,
    LOADER,
    "`name:` that is not a function schema",
    what="""The value of `name:` does not parse as a schema `name.overload(args) -> returns`.""",
    why="""load_derivatives parses it with FunctionSchema.parse, which raises.""",
    wrong="- name: abs\n  self: grad * self.sgn()\n",
    right=ABS_RIGHT,
)

LEGACY_SIGNATURE_NOT_FOUND = declare(
    "legacy-signature-not-found",
    ERROR,
    LOADER,
    "no function shares the entry's signature (an index inconsistency)",
    what="""No function of native_functions.yaml has the signature of the entry's function, although the
    function itself was found: the index is inconsistent (a native_functions.yaml the release rules only
    partly read).""",
    why="""load_derivatives groups functions by signature to find the canonical one; an empty group fails.""",
    wrong="(an entry whose function the index holds but not under its signature)",
    right=ABS_RIGHT,
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/codes/test_registry.py",
)

NO_CANONICAL_FUNCTION = declare(
    "no-canonical-function",
    ERROR,
    LOADER,
    "no function sharing the schema's signature has the entry's base name",
    what="""Among the functions sharing the signature of the entry's function, none is named like the entry
    (or its in-place `name_`): load_derivatives cannot pick the canonical function the formulas belong to.""",
    why="""load_derivatives' canonical_function asserts that one of them has the entry's name.""",
    wrong="(an entry for an out= or in-place variant whose functional variant has another name)",
    right=ABS_RIGHT,
    example=None,
    tested_by="tests/unit/test_legacy_checks.py",
)

UNSUPPORTED_TYPE = declare(
    "unsupported-type",
    ERROR,
    LOADER,
    "a type the 2021 codegen cannot read (2021 rules only)",
    what="""The entry's function uses an argument or return type the 2021 codegen has no C++ type for.""",
    why="""The 2021 codegen raises on a type it cannot translate, and the build stops.""",
    wrong="- name: symop(Tensor self, SymInt[] size) -> Tensor\n  self: grad\n",
    right=ABS_RIGHT,
    profiles=(LEGACY,),
    example=LEGACY,
    native="- func: symop(Tensor self, SymInt[] size) -> Tensor\n  use_c10_dispatcher: full\n",
)


RESERVED_ARGUMENT_GRAD_INPUT_MASK = declare(
    "reserved-argument-grad-input-mask",
    ERROR,
    LOADER,
    "the function has an argument named `grad_input_mask`",
    what="""The entry's function has an argument named `grad_input_mask`, a name the generated backward code
    defines itself.""",
    why="""load_derivatives refuses it: the generated local would shadow the argument.""",
    wrong="- name: mask_op(Tensor self, bool[3] grad_input_mask) -> Tensor\n  self: grad\n",
    right=ABS_RIGHT,
    fix="Rename the argument in native_functions.yaml.",
    native="- func: mask_op(Tensor self, bool[3] grad_input_mask) -> Tensor\n  dispatch:\n    CPU: mask_op\n",
)

RESERVED_ARGUMENT_RESULT = declare(
    "reserved-argument-result",
    ERROR,
    LOADER,
    "the function has an argument named `result`",
    what="""The entry's function has an argument named `result`, the name formulas use for the output.""",
    why="""load_derivatives refuses it: `result` is reserved for outputs.""",
    wrong="- name: result_op(Tensor self, Tensor result) -> Tensor\n  self: grad\n",
    right=ABS_RIGHT,
    fix="Rename the argument in native_functions.yaml.",
    profiles=(TORCHGEN,),
    native="- func: result_op(Tensor self, Tensor result) -> Tensor\n  dispatch:\n    CPU: result_op\n",
)

DISPATCH_NOT_SUPPORTED = declare(
    "dispatch-not-supported",
    ERROR,
    LOADER,
    "a `dispatch:` section under the 2021 rules",
    what="""The entry has a `dispatch:` section, which the 2021 loader does not know.""",
    why="""The 2021 loader reads `dispatch` as an argument name and fails on its mapping.""",
    wrong=ABS + "  dispatch:\n    Default:\n      self: grad * self.sgn()\n",
    right=ABS_RIGHT,
    fix="Write the formulas directly under the entry.",
    profiles=(LEGACY,),
    example=LEGACY,
)

INVALID_DISPATCH_KEY = declare(
    "invalid-dispatch-key",
    ERROR,
    LOADER,
    "a dispatch key other than `Default` and the autograd keys",
    what="""A key of the `dispatch:` section is neither `Default` nor one of the autograd dispatch keys the
    release knows (`AutogradNestedTensor`, `AutogradCUDA`, …).""",
    why="""load_derivatives asserts every dispatch key is one of those.""",
    wrong=ABS + "  dispatch:\n    Defualt:\n      self: grad * self.sgn()\n",
    right=ABS + "  dispatch:\n    Default:\n      self: grad * self.sgn()\n",
    fix="Replace the key with the closest valid one (offered as a quick fix).",
    profiles=(TORCHGEN,),
)

OUTPUT_DIFFERENTIABILITY_NOT_LIST = declare(
    "output-differentiability-not-list",
    ERROR,
    LOADER,
    "`output_differentiability` that is not a list (a warning under the 2021 rules)",
    what="""`output_differentiability:` must be a list: one True/False per output (or a single condition
    string).""",
    why="""load_derivatives indexes it as a list; the 2021 loader kept it as is and the generated code
    failed.""",
    wrong=MAX_DIM + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"
    "  output_differentiability: True\n",
    right=MAX_DIM + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"
    "  output_differentiability: [True, False]\n",
)

OUTPUT_DIFFERENTIABILITY_ITEM = declare(
    "output-differentiability-item",
    ERROR,
    LOADER,
    "an `output_differentiability` item that is not True, False or a condition (a warning under 2021 rules)",
    what="""An item of `output_differentiability:` is neither True, False nor a condition string.""",
    why="""load_derivatives reads each item as a bool (or one condition); anything else breaks the generated
    code.""",
    wrong=MAX_DIM + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"
    "  output_differentiability: [True, 0.5]\n",
    right=MAX_DIM + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"
    "  output_differentiability: [True, False]\n",
)

OUTPUT_DIFFERENTIABILITY_CONDITIONS = declare(
    "output-differentiability-conditions",
    ERROR,
    LOADER,
    "a condition in `output_differentiability` of a function with several outputs",
    what="""`output_differentiability:` holds a condition string, but conditions only work as the single item
    of a single-output function's list.""",
    why="""load_derivatives asserts a condition list has exactly one element.""",
    wrong=MAX_DIM + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"
    "  output_differentiability: ['self.requires_grad()', False]\n",
    right=MAX_DIM + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"
    "  output_differentiability: [True, False]\n",
    profiles=(TORCHGEN,),
)

NATIVE_FUNCTION_LEFT_OUT = declare(
    "native-function-left-out",
    WARNING,
    LOADER,
    "the entry's function was left out of the index by the release's rules",
    what="""The entry's function is in native_functions.yaml, but uses something the selected PyTorch
    release's rules do not know, so it was left out of the index and the entry is not checked.""",
    why="""Not a build error: derivls cannot judge the entry. Usually the wrong release is selected.""",
    wrong="(an entry for a function newer than the release derivls follows)",
    right="(the same entry, with --torch-version or the `torchVersion` setting naming the right release)",
    fix="Pick the matching release with --torch-version or the `torchVersion` setting.",
    example=None,
    tested_by="tests/lsp/test_legacy_profile.py",
)

KEY_NOT_STRING = declare(
    "key-not-string",
    ERROR,
    LOADER,
    "a formula key that is not a string of names",
    what="""A key of an entry (or of a dispatch section) is not a string of argument or output names (e.g.
    a number or a list).""",
    why="""load_derivatives splits each key on commas; a non-string key fails.""",
    wrong=ABS + "  1: grad * self.sgn()\n",
    right=ABS_RIGHT,
)

OVERLAP = declare(
    "overlap",
    ERROR,
    LOADER,
    "a name marked non_differentiable that also has a formula",
    what="""A name is marked `non_differentiable` in one key and has a derivative formula in another.""",
    why="""load_derivatives asserts the two sets do not overlap.""",
    wrong="- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
    "  self: handle_r_to_c(self.scalar_type(), grad)\n  other: non_differentiable\n"
    "  other, self: grad\n",
    right="- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
    "  self: handle_r_to_c(self.scalar_type(), grad)\n  other: non_differentiable\n",
    fix="Keep either the formula or the non_differentiable mark.",
    example=None,
    tested_by="tests/parity/test_error_parity.py",
)

ARG_AND_RETURN = declare(
    "arg-and-return",
    ERROR,
    LOADER,
    "a name that is both an argument and a named output",
    what="""A formula key names something that is both an input argument and a named return of the
    function.""",
    why="""load_derivatives cannot tell which one the formula is for and asserts it is not both.""",
    wrong="- name: argret(Tensor x) -> Tensor x\n  x: grad\n",
    right=ABS_RIGHT,
    fix="Rename the return in native_functions.yaml.",
    profiles=(TORCHGEN,),
    native="- func: argret(Tensor x) -> Tensor x\n  dispatch:\n    CPU: argret\n",
)

FORMULA_NOT_STRING = declare(
    "formula-not-string",
    ERROR,
    LOADER,
    "a formula that is not a string",
    what="""A formula's value is not a string (a number, a list, a mapping, `null`).""",
    why="""load_derivatives treats every formula as C++ text; anything else fails.""",
    wrong=ABS + "  self: 1\n",
    right=ABS + "  self: '1'\n",
    fix="Quote it.",
    profiles=(TORCHGEN, LEGACY),
    example=None,
    tested_by="tests/parity/test_error_parity.py",
)

UNKNOWN_NAME = declare(
    "unknown-name",
    ERROR,
    LOADER,
    "a formula key that is neither an argument nor an output (a warning under 2021 rules)",
    what="""A key names something that is neither an argument nor (for a forward formula) an output of the
    entry's function. The closest names are quick fixes.""",
    why="""load_derivatives raises on it; the 2021 loader accepted it but computed no gradient for it.""",
    wrong=ABS + "  slef: grad * self.sgn()\n",
    right=ABS_RIGHT,
    fix="Replace the name with the closest argument or output.",
)

GRADS_OUT_OF_BOUNDS = declare(
    "grads-out-of-bounds",
    ERROR,
    LOADER,
    "`grads[i]` past the function's outputs",
    what="""A formula reads `grads[i]` with `i` at or past the number of the function's outputs.""",
    why="""load_derivatives checks the index against the outputs and raises.""",
    wrong=MAX_DIM
    + "  self: value_selecting_reduction_backward_symint(grads[2], dim, indices, self.sym_sizes(), keepdim)\n",
    right=MAX_DIM
    + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n",
    example=None,
    tested_by="tests/parity/test_error_parity.py",
)

RESULT_MULTI_OUTPUT = declare(
    "result-multi-output",
    ERROR,
    LOADER,
    "a forward formula for `result` of a function with several outputs",
    what="""A forward formula is keyed `result`, but the function has several outputs: each needs its own
    name.""",
    why="""load_derivatives only maps `result` to the single output.""",
    wrong=MAX_DIM + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"
    "  result: gather_with_keepdimed_indices(self_t, dim, indices, keepdim)\n",
    right=MAX_DIM + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"
    "  values: gather_with_keepdimed_indices(self_t, dim, indices, keepdim)\n",
    fix="Key the formula by the output's name.",
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/parity/test_error_parity.py",
)

RESULT_INDEX_OUT_OF_BOUNDS = declare(
    "result-index-out-of-bounds",
    ERROR,
    LOADER,
    "`result<i>` past the function's outputs",
    what="""A forward formula is keyed `result<i>` (for an unnamed output) with `i` past the outputs.""",
    why="""load_derivatives checks the index and raises.""",
    wrong="(`result2: …` for a function with two unnamed outputs)",
    right="(`result1: …`)",
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/parity/test_error_parity.py",
)

GRADS_MIXED = declare(
    "grads-mixed",
    ERROR,
    LOADER,
    "formulas of one entry use both `grad` and `grads`",
    what="""The formulas of one entry use both `grad` and `grads[i]`.""",
    why="""load_derivatives refuses the mix: `grad` is `grads[0]`, so one of them is a mistake.""",
    wrong=MAX_DIM + "  self: grads[0] + grad\n",
    right=MAX_DIM
    + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n",
    fix="Replace `grad` with `grads[0]` (quick fix).",
    example=None,
    tested_by="tests/parity/test_error_parity.py",
)

GRADS_SOLELY_ZERO = declare(
    "grads-solely-zero",
    ERROR,
    LOADER,
    "formulas use `grads[0]` and no other `grads[i]`",
    what="""The formulas of an entry only ever use `grads[0]`.""",
    why="""load_derivatives refuses it: if the first output is the only differentiable one, `grad` says so;
    otherwise the formulas forget the other outputs' gradients.""",
    wrong=MAX_DIM
    + "  self: value_selecting_reduction_backward_symint(grads[0], dim, indices, self.sym_sizes(), keepdim)\n",
    right=MAX_DIM
    + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n",
    fix="Replace `grads[0]` with `grad` (quick fix).",
    example=None,
    tested_by="tests/parity/test_error_parity.py",
)

NAMED_GRADS_MIXED = declare(
    "named-grads-mixed",
    ERROR,
    LOADER,
    "named gradients (`grad_<output>`) mixed with `grad` or `grads[i]`",
    what="""The formulas of an entry use named gradients (`grad_values`) and also `grad` or `grads[i]`.""",
    why="""load_derivatives refuses the mix: use one way to refer to gradients.""",
    wrong=MAX_DIM + "  self: grad_values + grad\n",
    right=MAX_DIM
    + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n",
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/parity/test_error_parity.py",
)

STRIDES_MULTI = declare(
    "strides-multi",
    ERROR,
    LOADER,
    "`x.sym_strides()` in the formula of another variable than `x`",
    what="""A formula calls `x.sym_strides()` (2021: `x.strides()`) where `x` is not the variable the formula is
    for.""",
    why="""load_derivatives only replaces `.sym_strides()` (by strides_or_error) in the formula of the tensor
    it is called on, and raises otherwise.""",
    wrong="(in mul.Tensor's `self:` formula, `other.sym_strides()`)",
    right="(`other.sym_strides()` only in the `other:` formula)",
    example=None,
    tested_by="tests/unit/test_saved.py",
)

SIZES_NOT_SUPPORTED = declare(
    "sizes-not-supported",
    ERROR,
    LOADER,
    "`.sizes()` in a formula",
    what="""A formula calls `.sizes()` on a saved variable.""",
    why="""load_derivatives refuses `.sizes()`: formulas must be SymInt-aware (`.sym_sizes()`).""",
    wrong=ABS + "  self: grad * self.sgn().expand(self.sizes())\n",
    right=ABS + "  self: grad * self.sgn().expand_symint(self.sym_sizes())\n",
    fix="Write `.sym_sizes()`.",
    profiles=(TORCHGEN,),
)

SIZE_NOT_SUPPORTED = declare(
    "size-not-supported",
    ERROR,
    LOADER,
    "`.size(i)` in a formula",
    what="""A formula calls `.size(i)` on a saved variable.""",
    why="""load_derivatives refuses `.size(int)`: formulas must be SymInt-aware (`.sym_size(int)`).""",
    wrong=ABS + "  self: grad * self.sgn() * self.size(0)\n",
    right=ABS + "  self: grad * self.sgn() * self.sym_size(0)\n",
    fix="Write `.sym_size(i)` (quick fix).",
    profiles=(TORCHGEN,),
)

STRIDES_NOT_SUPPORTED = declare(
    "strides-not-supported",
    ERROR,
    LOADER,
    "`.strides()` in a formula",
    what="""A formula calls `.strides()` on a saved variable.""",
    why="""load_derivatives refuses `.strides()`: formulas must be SymInt-aware (`.sym_strides()`).""",
    wrong=ABS + "  self: grad.as_strided(self.sizes(), self.strides())\n",
    right=ABS_RIGHT,
    fix="Write `.sym_strides()`.",
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/unit/test_saved.py",
)

FORWARD_USES_BASE_NAME = declare(
    "forward-uses-base-name",
    ERROR,
    LOADER,
    "a forward formula names an argument without `_p` / `_t`",
    what="""A forward formula uses an argument's plain name (`self`) instead of its primal (`self_p`) or
    tangent (`self_t`).""",
    why="""load_derivatives refuses it: in a forward formula the plain name is ambiguous.""",
    wrong=ABS + "  self: grad * self.sgn()\n  result: self_t * self.sgn()\n",
    right=ABS
    + "  self: grad * self.sgn()\n  result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())\n",
    fix="Write `x_p` for the primal value or `x_t` for the tangent.",
    profiles=(TORCHGEN,),
)

AUTO_ELEMENT_WISE_INPLACE = declare(
    "auto-element-wise-inplace",
    ERROR,
    LOADER,
    "`auto_element_wise` for an in-place function",
    what="""An entry for an in-place function defines its forward formula as `auto_element_wise`.""",
    why="""load_derivatives refuses auto_element_wise for in-place variants.""",
    wrong="(an entry for `abs_(Tensor(a!) self)` with `result: auto_element_wise`)",
    right="(the functional entry `abs(Tensor self)` with `result: auto_element_wise`)",
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/parity/test_error_parity.py",
)

AUTO_ELEMENT_WISE_MISUSE = declare(
    "auto-element-wise-misuse",
    ERROR,
    LOADER,
    "`auto_element_wise` where it cannot be derived",
    what="""`auto_element_wise` on a function without a single differentiable input and output, or without a
    backward formula for its input.""",
    why="""load_derivatives derives the forward formula from the input's backward formula, and needs exactly
    one of each.""",
    wrong="- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: mul_tensor_backward(grad, other, "
    "self.scalar_type())\n  other: mul_tensor_backward(grad, self, other.scalar_type())\n  result: auto_element_wise\n",
    right=ABS + "  self: grad * self.sgn()\n  result: auto_element_wise\n",
    profiles=(TORCHGEN,),
)

AUTO_LINEAR_MISUSE = declare(
    "auto-linear-misuse",
    ERROR,
    LOADER,
    "`auto_linear` where it cannot be derived",
    what="""`auto_linear` on a function with several differentiable outputs, no differentiable argument, or
    that is neither a function nor a method variant.""",
    why="""load_derivatives derives the forward formula by calling the function again on the tangents, which
    needs one output and a callable variant.""",
    wrong=MAX_DIM + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"
    "  values: auto_linear\n",
    right=MAX_DIM + "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"
    "  values: gather_with_keepdimed_indices(self_t, dim, indices, keepdim)\n",
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/parity/test_error_parity.py",
)

DUPLICATE_ENTRY = declare(
    "duplicate-entry",
    WARNING,
    LOADER,
    "two entries for one function",
    what="""Two entries are for the same function; only one can take effect.""",
    why="""PyTorch 2.x's loader silently keeps the later entry: the earlier formulas are dead.""",
    wrong=ABS_RIGHT + ABS + "  self: grad * self.sign()\n",
    right=ABS_RIGHT,
    fix="Merge the two entries.",
    profiles=(TORCHGEN,),
)
