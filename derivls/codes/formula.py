"""Codes of the formula stage: a formula's C++ judged against what the generated code has in scope.

derivls/derivatives/formulas/rules/ holds one module per rule that emits these.
"""

from __future__ import annotations

from derivls.codes.model import TORCHGEN, Severity, Stage, declare

ERROR, WARNING, FORMULA = Severity.ERROR, Severity.WARNING, Stage.FORMULA
ONLY = (TORCHGEN,)

ABS = "- name: abs(Tensor self) -> Tensor\n"
MAX_DIM = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n"
MUL = "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n"
MUL_OTHER = "  other: mul_tensor_backward(grad, self, other.scalar_type())\n"
POW = "- name: pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor\n"


def _quoted(formula: str) -> str:
    """The formula as a YAML value (quoted where `: ` or `#` would end a plain scalar)."""
    return f"'{formula}'" if ": " in formula or " #" in formula else formula


def _abs(formula: str) -> str:
    return ABS + f"  self: {_quoted(formula)}\n"


def _max(formula: str) -> str:
    return MAX_DIM + f"  self: {_quoted(formula)}\n"


def _pow(formula: str) -> str:
    return POW + f"  self: {_quoted(formula)}\n"


FORMULA_UNKNOWN_NAME = declare(
    "formula-unknown-name",
    ERROR,
    FORMULA,
    "a name nothing declares",
    what="""A formula uses a name that nothing in scope declares: no argument, output, generated local
    (`grad`, `result`, …), FunctionsManual.h helper, ATen function or C++ name. The closest names are quick
    fixes. Also a `to_args_sizes`-like call load_derivatives does not replace.""",
    why="""The generated Functions.cpp / VariableType.cpp does not compile: "was not declared in this
    scope".""",
    wrong=_abs("grad * slef.sgn()"),
    right=_abs("grad * self.sgn()"),
    fix="Replace the name with the suggested one.",
    profiles=ONLY,
)

FORMULA_UNKNOWN_METHOD = declare(
    "formula-unknown-method",
    ERROR,
    FORMULA,
    "a method the receiver's type does not have",
    what="""`x.name(` where no Tensor method (nor a documented method of the receiver's non-Tensor type) is
    called `name`; or `x.name` where `x` is a Tensor (or an optional one) without such a member. Python
    attributes (`self.shape`, `self.ndim`) suggest their C++ spelling.""",
    why="""The compiler rejects it: "has no member named".""",
    wrong=_abs("grad * self.sgnn()"),
    right=_abs("grad * self.sgn()"),
    fix="Replace the method with the suggested one.",
    profiles=ONLY,
)

FORMULA_UNKNOWN_QUALIFIED = declare(
    "formula-unknown-qualified",
    ERROR,
    FORMULA,
    "`at::x`, `std::x`, `c10::x` that the namespace does not declare",
    what="""A qualified name `at::x`, `std::x` or `c10::x` that the namespace does not declare.""",
    why="""The compiler rejects it: "is not a member of 'at'".""",
    wrong=_abs("at::zeroz_like(grad)"),
    right=_abs("at::zeros_like(grad)"),
    fix="Replace the name with the suggested one.",
    profiles=ONLY,
)

FORMULA_GRAD_IN_FORWARD = declare(
    "formula-grad-in-forward",
    ERROR,
    FORMULA,
    "`grad`, `grads` or `grad_<output>` in a forward formula",
    what="""A forward formula (keyed by an output) uses `grad`, `grads` or `grad_<output>`, which only backward
    formulas have.""",
    why="""VariableType.cpp, where forward formulas are compiled, declares no `grad`: the build fails.""",
    wrong=ABS + "  self: grad * self.sgn()\n  result: self_t.conj() * self_p.sgn() + grad\n",
    right=ABS
    + "  self: grad * self.sgn()\n  result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())\n",
    fix="Use the tangents (`<arg>_t`) and primals (`<arg>_p`).",
    profiles=ONLY,
)

FORMULA_TANGENT_IN_BACKWARD = declare(
    "formula-tangent-in-backward",
    ERROR,
    FORMULA,
    "`<arg>_t` or `<arg>_p` in a backward formula",
    what="""A backward formula (keyed by an argument) uses a tangent `<arg>_t` or a primal `<arg>_p`, which only
    forward formulas have.""",
    why="""Functions.cpp, where backward formulas are compiled, declares no such names: the build fails.""",
    wrong=_abs("grad * self_p.sgn()"),
    right=_abs("grad * self.sgn()"),
    fix="Use the argument's own name and `grad`.",
    profiles=ONLY,
)

FORMULA_RESULT_NOT_OUTPUT = declare(
    "formula-result-not-output",
    ERROR,
    FORMULA,
    "`result` where the outputs are named or several",
    what="""A formula uses `result`, but the function's outputs are named or several: the generated code
    declares them by their names (`values`, `result0`, …), not `result`.""",
    why="""The generated code does not declare `result`: the build fails.""",
    wrong=_max("value_selecting_reduction_backward_symint(grad, dim, result, self.sym_sizes(), keepdim)"),
    right=_max("value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)"),
    fix="Use the output's name.",
    profiles=ONLY,
)

FORMULA_GRAD_INPUT_MASK_SINGLE = declare(
    "formula-grad-input-mask-single",
    ERROR,
    FORMULA,
    "`grad_input_mask` in a formula for one input",
    what="""A formula keyed by a single name uses `grad_input_mask`, which the generated code only declares for
    a formula of several inputs.""",
    why="""Functions.cpp declares no `grad_input_mask` there: the build fails.""",
    wrong=_abs("grad_input_mask[0] ? grad * self.sgn() : Tensor()"),
    right=_abs("grad * self.sgn()"),
    profiles=ONLY,
)

FORMULA_UNBALANCED = declare(
    "formula-unbalanced",
    ERROR,
    FORMULA,
    "an unbalanced `(`, `[` or `{`",
    what="""A bracket of the formula has no matching one.""",
    why="""The generated C++ does not parse.""",
    wrong=_abs("grad * (self.sgn()"),
    right=_abs("grad * (self.sgn())"),
    profiles=ONLY,
)

FORMULA_UNTERMINATED = declare(
    "formula-unterminated",
    ERROR,
    FORMULA,
    "a string or character literal or a comment that is never closed",
    what="""A string literal, character literal or `/*` comment of the formula is never closed.""",
    why="""The generated C++ does not parse (and the rest of the generated line is swallowed).""",
    wrong=_abs("grad * self.sgn() /* the sign"),
    right=_abs("grad * self.sgn() /* the sign */"),
    profiles=ONLY,
)

FORMULA_ADL_NO_TENSOR = declare(
    "formula-adl-no-tensor",
    WARNING,
    FORMULA,
    "an unqualified ATen call in a backward formula without a Tensor argument (an error when certain)",
    what="""In a backward formula, an unqualified call of an ATen function none of whose arguments can be a
    Tensor. Functions.cpp reaches `at::` only through argument-dependent lookup on a Tensor argument. A
    warning; an error where that lookup certainly fails (no argument, or every argument typed and none in
    `at::`).""",
    why="""The compiler does not find the function: "was not declared in this scope".""",
    wrong=_max("zeros({dim, keepdim})"),
    right=_max("at::zeros({dim, keepdim})"),
    fix="Qualify the call with `at::`.",
    profiles=ONLY,
)

FORMULA_NOT_SUBSCRIPTABLE = declare(
    "formula-not-subscriptable",
    ERROR,
    FORMULA,
    "`x[…]` where `x` is a Scalar or a number",
    what="""A formula indexes `x[…]` where `x` is a `Scalar` argument (a `c10::Scalar`) or an `int`, `float` or
    `bool` one: only lists are indexed.""",
    why="""The compiler rejects it: "no match for operator[]".""",
    wrong=_max("grad.select(0, dim[0])"),
    right=_max("value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)"),
    profiles=ONLY,
)

FORMULA_CONDITIONAL_TYPES = declare(
    "formula-conditional-types",
    ERROR,
    FORMULA,
    "`c ? a : b` whose branches have no common type",
    what="""A conditional `c ? a : b` whose branches are typed and neither converts to the other's type
    (`keepdim ? 2 : grad`: an int and a Tensor).""",
    why="""The compiler rejects it: "operands to ?: have different types".""",
    wrong=_max("mul(grad, keepdim ? 2 : grad)"),
    right=_max("mul(grad, keepdim ? grad * 2 : grad)"),
    profiles=ONLY,
)

FORMULA_OPERAND_TYPE = declare(
    "formula-operand-type",
    ERROR,
    FORMULA,
    "`a op b` that no operator takes",
    what="""An arithmetic operator or comparison that no C++ operator takes: a `c10::Scalar` beside anything but
    a Tensor (c10::Scalar has no operators of its own), a `std::optional` or a list in arithmetic.""",
    why="""The compiler rejects it: "no match for operator".""",
    wrong=_pow("exponent > 0. ? grad : grad"),
    right=_pow("exponent.toDouble() > 0. ? grad : grad"),
    fix="Convert the value first (`x.toDouble()`, `x.value()`).",
    profiles=ONLY,
)

FORMULA_RESULT_TYPE = declare(
    "formula-result-type",
    ERROR,
    FORMULA,
    "a formula whose value the generated code cannot take",
    what="""The formula's value has a type the generated code cannot take: for one input, a tuple or a value
    that is no Tensor (for one `Tensor` or `Tensor?` input, a list of Tensors such as `grads` too: the
    formula is written `any_grad_defined ? (<formula>) : Tensor()`, so `grad.dim()`, `grad.sym_sizes()` or
    `grads` have no common type with the Tensor); for several inputs, anything but a tuple of at least as many elements; for one
    Tensor output of a forward formula, a value that is no Tensor; for one list output (`unbind.int`'s
    `Tensor[]`), a value that is no list — a Tensor, or `auto_element_wise`, whose expansion `(…).conj()` is
    one; `auto_linear` of a `_foreach_` function (the function's own list where one element goes).""",
    why="""The generated `any_grad_defined ? (<formula>) : Tensor()`, `copy_range(grad_inputs, …, grad_result)`
    or `std::get<k>(grad_result)` does not compile, nor the VariableType kernel's `result_new_fw_grad_opt = <formula>;` (a
    `std::optional<at::Tensor>`, or `std::optional<std::vector<at::Tensor>>` for a list output).""",
    wrong=_abs("M_PI"),
    right=_abs("grad * M_PI"),
    profiles=ONLY,
)

FORMULA_PYTHON_SYNTAX = declare(
    "formula-python-syntax",
    ERROR,
    FORMULA,
    "Python written where C++ is compiled (`**`, `//`, `a if c else b`, `torch.f`)",
    what="""Python in a C++ formula: `a ** b` (C++ reads `a * (*b)`), `a // b` (a C++ comment that swallows the
    rest), `a if c else b`, `torch.f(…)`. The quick fix writes the C++ spelling.""",
    why="""The generated C++ does not compile, or silently means something else.""",
    wrong=_abs("grad * self.sgn() ** 2"),
    right=_abs("grad * self.sgn().pow(2)"),
    fix="Use the C++ spelling the quick fix offers (`x.pow(e)`, `/`, `c ? a : b`, `at::f`).",
    profiles=ONLY,
)

FORMULA_MEMBER_NOT_CALLED = declare(
    "formula-member-not-called",
    ERROR,
    FORMULA,
    "a member function named without a call",
    what="""`x.name` without `()` where `name` is a member function of what `x` holds (`self.numel`,
    `self.dtype`): C++ has no properties.""",
    why="""The compiler rejects it: "invalid use of non-static member function".""",
    wrong=_abs("grad.to(self.dtype)"),
    right=_abs("grad.to(self.dtype())"),
    fix="Add `()` (quick fix).",
    profiles=ONLY,
)

FORMULA_AMBIGUOUS_NAME = declare(
    "formula-ambiguous-name",
    ERROR,
    FORMULA,
    "an unqualified name VariableType.cpp finds twice (`complex`, `is_complex`, `std`)",
    what="""`complex(…)`, `is_complex(…)` or `std(…)` unqualified in a forward formula: VariableType.cpp finds
    both the ATen function (through `using namespace at;`) and what c10 declares.""",
    why="""The compiler rejects it: "reference to 'complex' is ambiguous".""",
    wrong="- name: complex(Tensor real, Tensor imag) -> Tensor\n  real: at::real(grad)\n  imag: at::imag(grad)\n"
    "  result: complex(real_t, imag_t)\n",
    right="- name: complex(Tensor real, Tensor imag) -> Tensor\n  real: at::real(grad)\n  imag: at::imag(grad)\n"
    "  result: at::complex(real_t, imag_t)\n",
    fix="Qualify the call with `at::`.",
    profiles=ONLY,
)

FORMULA_LOCAL_CALLED = declare(
    "formula-local-called",
    ERROR,
    FORMULA,
    "a call of a local of the generated code (an argument hides the function)",
    what="""A call `f(…)` where `f` is a local of the generated code (an argument or output, `grad`): the local
    hides every function of that name, and no local can be called.""",
    why="""The compiler rejects it: "no match for call to".""",
    wrong="- name: complex(Tensor real, Tensor imag) -> Tensor\n  real: real(grad)\n  imag: at::imag(grad)\n",
    right="- name: complex(Tensor real, Tensor imag) -> Tensor\n  real: at::real(grad)\n  imag: at::imag(grad)\n",
    fix="Qualify the function the local hides (`at::real`, `std::max`; quick fix).",
    profiles=ONLY,
)

FORMULA_INDEX_OUT_OF_RANGE = declare(
    "formula-index-out-of-range",
    WARNING,
    FORMULA,
    "`grad_input_mask[k]` or `grads[k]` past the inputs or outputs",
    what="""In a backward formula, `grad_input_mask[k]` with a literal `k` past the formula's inputs, or
    `grads[k]` past the function's outputs.""",
    why="""The build passes, and the formula reads past the end of an array at run time.""",
    wrong=MUL + "  self, other: mul_tensor_backward(grad, grad_input_mask[2] ? other : self, self.scalar_type())\n",
    right=MUL + "  self: mul_tensor_backward(grad, other, self.scalar_type())\n" + MUL_OTHER,
    profiles=ONLY,
    example=None,
    tested_by="tests/formulas/rules/test_index_out_of_range.py",
)

FORMULA_NOT_BOOL = declare(
    "formula-not-bool",
    ERROR,
    FORMULA,
    "a Tensor, Scalar or list used as a condition",
    what="""A `?:` condition, `!`'s operand or `&&`/`||`'s operand typed as a Tensor, a `c10::Scalar` or a list,
    none of which converts to bool: Python's truthiness.""",
    why="""The compiler rejects it: "could not convert to bool".""",
    wrong=_max("grad ? grad : grad"),
    right=_max("grad.defined() ? grad : grad"),
    fix="For a Tensor, `x.defined()` (quick fix).",
    profiles=ONLY,
)

FORMULA_SAVED_CALL_QUALIFIED = declare(
    "formula-saved-call-qualified",
    ERROR,
    FORMULA,
    "`at::zeros_like(x)` and the like of an argument (the saved-call substitution breaks it)",
    what="""`at::zeros_like(self)`, `at::TensorGeometry(self)` of an argument or output: load_derivatives'
    substitution of `zeros_like(self)` also matches after a qualifier, so the generated code reads
    `at::self_info.zeros()`.""",
    why="""The generated code does not compile.""",
    wrong=_abs("at::zeros_like(self)"),
    right=_abs("zeros_like(self)"),
    fix="Drop the qualifier (quick fix).",
    profiles=ONLY,
)

FORMULA_ARGUMENT_COUNT = declare(
    "formula-argument-count",
    ERROR,
    FORMULA,
    "a call with a number of arguments no overload takes",
    what="""A call of a FunctionsManual.h helper or an ATen operator (`at::f`, an unqualified `f` only ATen can
    be, `x.f`) with a number of arguments none of its overloads takes (defaults counted).""",
    why="""The compiler rejects it: "no matching function for call".""",
    wrong=_abs("at::sgn(grad, self) * grad"),
    right=_abs("at::sgn(self) * grad"),
    profiles=ONLY,
)

FORMULA_SYMINT_TO_INT = declare(
    "formula-symint-to-int",
    ERROR,
    FORMULA,
    "a SymInt list passed where the plain name takes an int list",
    what="""A list of SymInt (`x.sym_sizes()`, a `SymInt[]` argument) passed to an ATen operator under its plain
    C++ name, which takes `IntArrayRef` there.""",
    why="""The compiler rejects it: no conversion from SymIntArrayRef to IntArrayRef.""",
    wrong=_abs("grad.expand(self.sym_sizes()) * self.sgn()"),
    right=_abs("grad.expand_symint(self.sym_sizes()) * self.sgn()"),
    fix="Call the `_symint` name (quick fix).",
    profiles=ONLY,
)

FORMULA_INT_TO_SYMINT = declare(
    "formula-int-to-symint",
    ERROR,
    FORMULA,
    "an int list passed to a `_symint` name that takes a SymInt list",
    what="""A list of int64_t (an `int[]` argument) passed to an ATen operator's `_symint` name, where every
    overload taking that many arguments has a `SymIntArrayRef` parameter there.""",
    why="""The compiler rejects it: no conversion from IntArrayRef to SymIntArrayRef.""",
    wrong="- name: permute(Tensor(a) self, int[] dims) -> Tensor(a)\n  self: permute_backwards(grad, dims)\n"
    "  result: auto_linear\n  dims: non_differentiable\n",
    right="(the plain name for an int list)",
    profiles=ONLY,
    example=None,
    tested_by="tests/formulas/rules/test_int_to_symint.py",
)

FORMULA_ARGUMENT_TYPE = declare(
    "formula-argument-type",
    ERROR,
    FORMULA,
    "an argument that can never become its parameter",
    what="""A call of a FunctionsManual.h helper or an ATen operator where, in every overload taking that many
    arguments, some argument can never become its parameter by an implicit conversion: a Tensor for a
    number, a number or a list for a Tensor, …""",
    why="""The compiler rejects it: "no matching function for call" / "cannot convert".""",
    wrong=_abs("at::sqrt(M_PI) * grad"),
    right=_abs("grad * std::sqrt(M_PI)"),
    profiles=ONLY,
)

FORMULA_CONTEXT = declare(
    "formula-context",
    ERROR,
    FORMULA,
    "text that cannot stand where the generated C++ puts the formula (`;`, `return`, a top-level comma, `#`)",
    what="""A formula is one C++ expression, and torchgen pastes it into a fixed place: a backward formula for
    one Tensor input into `auto grad_result = any_grad_defined ? (<formula>) : Tensor();`, several inputs into
    `auto grad_result = <formula>;`, a `_foreach_` entry's into `grad_result.emplace_back(<formula>);`, a forward
    formula into `<out>_new_fw_grad_opt = <formula>;` (and, for `auto_element_wise`, the backward formula into
    `(<formula>).conj()` too). A `;`, a statement keyword (`return`, `for`, …) or `auto` outside a lambda's body,
    a bare top-level comma, a Python `# comment` or `\\`, or a formula that ends on `,`, `:` or an operator
    cannot stand there. Where the build accepts the text (a trailing `;` where the formula ends a statement, a
    comma operator that drops a value) it is a warning.""",
    why="""The generated Functions.cpp or VariableType.cpp does not compile (g++: expected ')' before ';',
    expected primary-expression before 'return', …).""",
    wrong=_abs("grad * self.sgn();"),
    right=_abs("grad * self.sgn()"),
    fix="Write one expression; statements belong in a lambda's body (`[&]() { auto g = grad; return g; }()`), "
    "several inputs' values in `std::make_tuple(…)`.",
    profiles=ONLY,
)
