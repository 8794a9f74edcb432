"""Codes of the codegen stage: the checks torchgen's autograd codegen makes after load_derivatives
(emitted by the rules of derivls/derivatives/formulas/codegen_rules/, driven by formulas/checks.py)."""

from __future__ import annotations

from derivls.codes.model import TORCHGEN, Severity, Stage, declare

ERROR, CODEGEN = Severity.ERROR, Stage.CODEGEN
ONLY = (TORCHGEN,)
MUL = "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n"
MUL_BACKWARD = (
    "  self: mul_tensor_backward(grad, other, self.scalar_type())\n"
    "  other: mul_tensor_backward(grad, self, other.scalar_type())\n"
)
MAX_DIM = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n"
MAX_BACKWARD = "  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)\n"

CODEGEN_STRIDES_INPLACE = declare(
    "codegen-strides-inplace",
    ERROR,
    CODEGEN,
    "`.sym_strides()` in the `self` formula while an in-place overload shares it",
    what="""The `self` formula calls `self.sym_strides()`, and an in-place overload shares the entry's formulas:
    the in-place function overwrites `self`, so its strides cannot be saved.""",
    why="""torchgen's match_differentiability_info asserts against it.""",
    wrong="(an entry for `mul.Tensor` whose `self:` formula reads `self.sym_strides()`; `mul_.Tensor` shares it)",
    right="(the formula without `self.sym_strides()`, or an entry of its own for the in-place overload)",
    profiles=ONLY,
    example=None,
    tested_by="tests/parity/test_codegen_stage_parity.py",
)

CODEGEN_INPLACE_FORWARD_COUNT = declare(
    "codegen-inplace-forward-count",
    ERROR,
    CODEGEN,
    "several forward formulas shared with an in-place overload",
    what="""The entry has several forward formulas and an in-place overload shares them.""",
    why="""torchgen's match_differentiability_info asserts an in-place function has at most one.""",
    wrong="(an entry with two forward formulas for a function with an in-place variant)",
    right="(one forward formula, or an entry of its own for the in-place overload)",
    profiles=ONLY,
    example=None,
    tested_by="",  # no derivatives.yaml edit found yet that reaches it: see tests/codes NOT_YET_EMITTED
)

CODEGEN_INPLACE_USES_SELF_P = declare(
    "codegen-inplace-uses-self-p",
    ERROR,
    CODEGEN,
    "an in-place entry's forward formula reads `self_p`",
    what="""An entry for an in-place function whose forward formula reads `self_p`, the value the function
    overwrites.""",
    why="""torchgen's match_differentiability_info asserts against it: `self_p` is already the new value.""",
    wrong="- name: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)\n"
    + MUL_BACKWARD
    + "  result: self_t * other_p + self_p * other_t\n",
    right="(use `original_self_p`, or derive the in-place formula from the functional entry)",
    profiles=ONLY,
    example=None,
    tested_by="tests/parity/test_codegen_stage_parity.py",
)

CODEGEN_NOT_ABSTRACT = declare(
    "codegen-not-abstract",
    ERROR,
    CODEGEN,
    "formulas for a function without a dispatch section (CompositeImplicitAutograd)",
    what="""The entry gives formulas for a function without a `dispatch:` section in native_functions.yaml
    (CompositeImplicitAutograd): autograd goes through the functions it calls, not through a node of its
    own.""",
    why="""torchgen's gen_variable_type_func asserts against it.""",
    wrong="- name: square(Tensor self) -> Tensor\n  self: 2 * grad * self\n",
    right="(no entry: `square` is differentiated through `pow`)",
    profiles=ONLY,
    example=None,
    tested_by="tests/parity/test_codegen_stage_parity.py",
)

CODEGEN_OUTPUT_DIFFERENTIABILITY_LENGTH = declare(
    "codegen-output-differentiability-length",
    ERROR,
    CODEGEN,
    "`output_differentiability` whose length differs from an overload's outputs",
    what="""`output_differentiability:` has a different number of items than the function (or an overload
    sharing its formulas) has outputs.""",
    why="""torchgen's gen_differentiable_outputs asserts the lengths are equal.""",
    wrong=MAX_DIM + MAX_BACKWARD + "  output_differentiability: [True]\n",
    right=MAX_DIM + MAX_BACKWARD + "  output_differentiability: [True, False]\n",
    profiles=ONLY,
)

CODEGEN_OUTPUT_DIFFERENTIABILITY_INPLACE = declare(
    "codegen-output-differentiability-inplace",
    ERROR,
    CODEGEN,
    "a False in `output_differentiability` while an in-place overload shares it",
    what="""`output_differentiability:` holds False, and an in-place overload shares the entry's formulas.""",
    why="""torchgen's gen_differentiable_outputs asserts an in-place function's output is differentiable.""",
    wrong=MUL + MUL_BACKWARD + "  output_differentiability: [False]\n",
    right=MUL + MUL_BACKWARD,
    profiles=ONLY,
    example=None,
    tested_by="tests/parity/test_codegen_stage_parity.py",
)

CODEGEN_FOREACH_ARGUMENT_TYPE = declare(
    "codegen-foreach-argument-type",
    ERROR,
    CODEGEN,
    "an in-place `_foreach_` function whose arguments are not its formulas' function's, element by element",
    what="""Formulas for an in-place `_foreach_` function (`_foreach_div_.Tensor`…) taken from an info whose
    function's arguments are not the foreach function's, element for element: most often an entry for the
    in-place foreach function itself, whose `Tensor[] self` is then compared with itself. Reported on the
    entry's backward formulas.""",
    why="""torchgen's emit_body (gen_variable_type.py) reads an in-place foreach function's formulas as its
    reference's (the non-foreach function, `div.Tensor` for `_foreach_div_.Tensor`): it pairs each argument with
    the reference's and asserts `foreach_arg_type == ref_arg.type`, a list argument compared by its element
    (`Tensor[]` as `Tensor`).""",
    wrong="- name: _foreach_div_.Tensor(Tensor(a!)[] self, Tensor other) -> ()\n  self: grad\n",
    right="- name: div.Tensor(Tensor self, Tensor other) -> Tensor\n"
    "  self: div_tensor_self_backward(grad, other, self.scalar_type())\n"
    "  other: div_tensor_other_backward(grad, self, other)\n",
    fix="""Remove the in-place foreach function's entry: torchgen gives it the formulas of its reference
    (`div.Tensor` for `_foreach_div_.Tensor`), element by element.""",
    profiles=ONLY,
)

CODEGEN_DERIVATIVE_FOR_NON_TENSOR = declare(
    "codegen-derivative-for-non-tensor",
    ERROR,
    CODEGEN,
    "a backward formula for an argument that is not a differentiable Tensor",
    what="""A backward formula for an argument that is not a differentiable Tensor (an int, a bool, a Scalar,
    an integral Tensor list…).""",
    why="""torchgen's emit_body finds no such differentiable input and asserts.""",
    wrong="- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n"
    + MAX_BACKWARD
    + "  dim: grad\n",
    right=MAX_DIM + MAX_BACKWARD,
    fix="Mark it `non_differentiable`, or drop the formula.",
    profiles=ONLY,
    example=None,
    tested_by="tests/parity/test_codegen_stage_parity.py",
)

CODEGEN_DERIVATIVE_IGNORED = declare(
    "codegen-derivative-ignored",
    ERROR,
    CODEGEN,
    "backward formulas but no differentiable output or input",
    what="""The entry has backward formulas, but no differentiable output (`output_differentiability` all
    False, a DONT_REQUIRE_DERIVATIVE function) or input.""",
    why="""torchgen's emit_body asserts the formulas would be used.""",
    wrong=MAX_DIM + MAX_BACKWARD + "  output_differentiability: [False, False]\n",
    right=MAX_DIM + MAX_BACKWARD + "  output_differentiability: [True, False]\n",
    profiles=ONLY,
)

CODEGEN_FORWARD_COUNT = declare(
    "codegen-forward-count",
    ERROR,
    CODEGEN,
    "forward formulas covering more or fewer outputs than the differentiable ones",
    what="""The forward formulas cover more or fewer outputs than the function has differentiable ones.""",
    why="""torchgen's emit_body asserts every differentiable output has one forward formula, or none has.""",
    wrong="- name: _fused_dropout(Tensor self, float p, Generator? generator=None) -> (Tensor, Tensor)\n"
    "  self: _fused_dropout_backward(grad, result1, p)\n  result0: self_t\n  result1: self_t\n",
    right="(one forward formula for each differentiable output)",
    profiles=ONLY,
    example=None,
    tested_by="tests/parity/test_codegen_stage_parity.py",
)

CODEGEN_FORWARD_NO_TANGENT = declare(
    "codegen-forward-no-tangent",
    ERROR,
    CODEGEN,
    "a forward formula that reads no tangent of a differentiable input",
    what="""A forward formula reads no `<input>_t` of any input that has a backward formula.""",
    why="""torchgen's emit_body builds the "any input has a forward grad" condition from the tangents a formula
    reads, and asserts there is one.""",
    wrong="- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n  result: self_p.sgn()\n",
    right="- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"
    "  result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())\n",
    profiles=ONLY,
)

CODEGEN_FORWARD_OUTPUT_TYPE = declare(
    "codegen-forward-output-type",
    ERROR,
    CODEGEN,
    "a forward formula for an output that is not a Tensor",
    what="""A forward formula for an output that is not a Tensor (or a single Tensor list).""",
    why="""torchgen's emit_fw_derivatives only generates forward code for Tensor outputs and asserts.""",
    wrong="(a forward formula for an `int` output)",
    right="(forward formulas for Tensor outputs only)",
    profiles=ONLY,
    example=None,
    tested_by="",  # no derivatives.yaml edit found yet that reaches it: see tests/codes NOT_YET_EMITTED
)

CODEGEN_FORWARD_RESULT_NAMED_OUTPUT = declare(
    "codegen-forward-result-named-output",
    ERROR,
    CODEGEN,
    "a forward formula keyed `result` for a function whose one output the kernel declares by another name",
    what="""A forward formula keyed `result` for a function (not in-place) whose one output is named in
    native_functions.yaml (`-> Tensor output`): load_derivatives takes `result` for the only output, but the
    VariableType kernel declares it by its name. Reported on the key.""",
    why="""gen_variable_type writes the forward-mode code with the key's names (`result_new_fw_grad_opt`,
    `result.defined()`, `result._set_fw_grad(…)`) beside a kernel that declares `auto output = …`: VariableType.cpp
    does not compile ('result' was not declared in this scope).""",
    wrong="- name: cudnn_grid_sampler(Tensor self, Tensor grid) -> Tensor output\n"
    '  self, grid: "grad.defined() ? cudnn_grid_sampler_backward(self, grid, grad) : std::tuple<Tensor, Tensor>()"\n'
    "  result: auto_linear\n",
    right="- name: cudnn_grid_sampler(Tensor self, Tensor grid) -> Tensor output\n"
    '  self, grid: "grad.defined() ? cudnn_grid_sampler_backward(self, grid, grad) : std::tuple<Tensor, Tensor>()"\n'
    "  output: auto_linear\n",
    fix="Key the forward formula by the output's name.",
    profiles=ONLY,
)

CODEGEN_VIEW_FUNCTION = declare(
    "codegen-view-function",
    ERROR,
    CODEGEN,
    "a view function whose differentiable output the ADInplaceOrView kernel cannot replay",
    what="""An entry gives a view function (`view`, `select`, `narrow`… with their overloads: torchgen's
    RETURNS_VIEWS_OF_INPUT) a differentiable output, and the function has an argument the generated view-replay
    lambda cannot capture (anything but an int, SymInt, bool, int list, SymInt list, Tensor or optional int,
    SymInt or Tensor: a `ScalarType dtype`, a `float`, a `Tensor[]`…), or it gives it several differentiable
    outputs. The real file keeps such outputs non-differentiable (`view.dtype`: `output_differentiability:
    [False]`). Reported on the entry's backward formulas.""",
    why="""gen_inplace_or_view_type's emit_view_body writes a lambda that replays the view for each
    differentiable output (emit_view_func), and raises a TypeError for an argument of any other type ("You are
    adding an … argument to op view in addition to known types"), or a RuntimeError for several differentiable
    outputs.""",
    wrong="- name: view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)\n  self: grad\n",
    right="- name: view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)\n  output_differentiability: [False]\n",
    fix="Mark the output non-differentiable (`output_differentiability: [False]`), as the real file does.",
    profiles=ONLY,
)

CODEGEN_FORWARD_OPTIONAL_TENSOR_LIST = declare(
    "codegen-forward-optional-tensor-list",
    ERROR,
    CODEGEN,
    "a `Tensor?[]` / `Tensor[]` argument with a backward formula whose tangent a forward formula reads",
    what="""A backward formula for a `Tensor?[]` or `Tensor[]` argument (not in a `_foreach_` entry), in an entry
    whose forward formula reads that argument's tangent or primal (`indices_t`; `auto_linear` and
    `auto_element_wise` read every one). The loader and gen_variable_type accept it as differentiable; reported on
    the argument's key.""",
    why="""gen_variable_type unpacks every input with a derivative through `isFwGradDefined` and
    `toNonOptFwGrad`, which take a `const std::optional<Tensor>&`; a `c10::List<std::optional<Tensor>>` (or an
    `at::TensorList`) is not one, and VariableType.cpp does not compile.""",
    wrong="`indices: grad` with `result: auto_linear` on an entry whose `indices` is a `Tensor?[]`",
    right="`indices: non_differentiable`, or no forward formula that reads `indices_t`",
    profiles=ONLY,
    example=None,
    tested_by="tests/formulas/test_argument_kinds.py",
)
