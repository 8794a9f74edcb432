"""The autograd-node codegen: torchgen's ``process_function``, without torchgen.

``process_function(info, template)`` is a line-by-line port of
``torchgen/packaged/autograd/gen_autograd_functions.py::process_function`` (torch 2.13.0).
It reads a DifferentiabilityInfo only through attribute names that derivls's model and
torchgen's share, so it renders derivls's infos and torchgen's alike:

- C++ types are compared by their ``cpp_type()`` strings, never by class or equality
  against torchgen objects (the strings are distinct for distinct CTypes of the kinds
  that occur here);
- a Binding's ``argument`` counts as a schema ``Argument`` when it has a ``type``
  (torchgen's SelfArgument and TensorOptionsArguments have none).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from derivls.codegen.templates import (
    COMPUTE_NEEDS_INPUT_GRAD,
    DERIVATIVE_MULTI,
    DERIVATIVE_MULTI_COPY_RANGE,
    DERIVATIVE_SINGLE,
    DERIVATIVE_SINGLE_FOREACH,
    FUNCTION_DECLARATION,
    FUNCTION_DEFINITION,
    GETTER_BODY_ARRAYREF_DOUBLE,
    GETTER_BODY_ARRAYREF_LONG,
    GETTER_BODY_ARRAYREF_SYMINT,
    GETTER_BODY_INT64_T,
    GETTER_BODY_RAW_SAVEDVAR,
    GETTER_BODY_RAW_VEC_SAVEDVAR,
    GETTER_BODY_SAVEDVAR,
    GETTER_BODY_STRING,
    GETTER_BODY_SYMINT,
    GETTER_BODY_VEC_SAVEDVAR,
    GETTER_BODY_VEC_SCALAR,
    GETTER_DEFINITION,
    GETTER_DEFINITION_OPT,
    GETTER_DEFINITION_OPT_ARRAYREF,
    GETTER_DEFINITION_RAW_SAVEDVAR,
    GETTER_DEFINITION_RAW_VEC_SAVEDVAR,
    GETTER_DEFINITION_SAVEDVAR,
    GETTER_DEFINITION_VEC_SAVEDVAR,
    GETTER_DEFINITION_VEC_SCALAR,
    GRAD_INPUT_MASK,
    MISC_GETTER_DEFS,
    PY_GETSETDEF_STRUCT,
    PY_RAW_GETSETDEF_STRUCT,
    UNTRACEABLE_FUNCTIONS,
    WILL_RELEASE_VARIABLES,
    CodeTemplate,
)

# Set while rendering for a release before 2.6: its per-derivative templates (see generate_node)
_inner_templates: ContextVar[Any] = ContextVar("inner_templates", default=None)

# torchgen.utils.IDENT_REGEX
IDENT_REGEX = r"(^|\W){}($|\W)"

# torchgen.api.types.TENSOR_LIST_LIKE_CTYPES: compared against Binding.type (a string).
TENSOR_LIST_LIKE_CTYPES = [
    "at::TensorList",
    "const c10::List<::std::optional<at::Tensor>> &",
    "const at::ITensorListRef &",
]

# cpp_type() of the CTypes process_function tells apart (torchgen's name in the comment).
TENSOR = "at::Tensor"  # BaseCType(tensorT)
OPTIONAL_TENSOR = "::std::optional<at::Tensor>"  # OptionalCType(BaseCType(tensorT))
MUTREF_OPTIONAL_TENSOR = "::std::optional<at::Tensor> &"  # MutRefCType(OptionalCType(BaseCType(tensorT)))
SCALAR = "at::Scalar"  # BaseCType(scalarT)
TENSOR_LIST = "at::TensorList"  # BaseCType(tensorListT)
ITENSOR_LIST_REF = "at::ITensorListRef"  # BaseCType(iTensorListRefT)
VECTOR_TENSOR = "::std::vector<at::Tensor>"  # VectorCType(BaseCType(tensorT))
LIST_OPTIONAL_TENSOR = "c10::List<::std::optional<at::Tensor>>"  # ListCType(OptionalCType(BaseCType(tensorT)))
INT_ARRAY_REF = "at::IntArrayRef"  # BaseCType(intArrayRefT)
SYMINT_ARRAY_REF = "c10::SymIntArrayRef"  # BaseCType(symIntArrayRefT)
OPTIONAL_INT_ARRAY_REF_T = "at::OptionalIntArrayRef"  # BaseCType(optionalIntArrayRefT)
OPTIONAL_SYMINT_ARRAY_REF_T = "at::OptionalSymIntArrayRef"  # BaseCType(optionalSymIntArrayRefT)
OPTIONAL_INT_ARRAY_REF = "::std::optional<at::IntArrayRef>"  # OptionalCType(BaseCType(intArrayRefT))
OPTIONAL_SYMINT_ARRAY_REF = "::std::optional<c10::SymIntArrayRef>"  # OptionalCType(BaseCType(symIntArrayRefT))
OPTIONAL_DOUBLE_ARRAY_REF = "::std::optional<at::ArrayRef<double>>"  # OptionalCType(ArrayRefCType(BaseCType(doubleT)))
LONG = "int64_t"  # BaseCType(longT)
SYMINT = "c10::SymInt"  # BaseCType(SymIntT)
STRING = "c10::string_view"  # BaseCType(stringT)
OPTIONAL_STRING = "::std::optional<c10::string_view>"  # OptionalCType(BaseCType(stringT))
SCALAR_ARRAY_REF = "at::ArrayRef<at::Scalar>"  # ArrayRefCType(BaseCType(BaseCppType("at", "Scalar")))


@dataclass(frozen=True)
class GeneratedNode:
    """One autograd node: its class name and its Functions.h / Functions.cpp text."""

    op: str
    declaration: str
    definition: str


def uses_ident(info: Any, ident: str) -> bool:
    """torchgen.api.autograd.uses_ident."""
    if info is None:
        return False
    for derivative in info.derivatives:
        if re.search(IDENT_REGEX.format(ident), derivative.formula):
            return True
    return False


def uses_retain_variables(info: Any) -> bool:
    return uses_ident(info, "retain_variables")


def uses_single_grad(info: Any) -> bool:
    return uses_ident(info, "grad")


def _is_schema_argument(argument: Any) -> bool:
    # torchgen's ``isinstance(arg.argument, Argument)``: of Argument, SelfArgument and
    # TensorOptionsArguments only Argument has a ``type``.
    return hasattr(argument, "type") and hasattr(argument, "name")


def _is_foreach(info: Any) -> bool:
    return str(info.func.func.name.name.base).startswith("_foreach")


def process_function(info: Any, template: CodeTemplate) -> str:
    """Render ``template`` for one DifferentiabilityInfo, as torchgen's process_function does."""
    saved_variables: list[str] = []
    release_variables: list[str] = []
    saved_list_sizes: list[str] = []
    unpack: list[str] = []
    asserts: list[str] = []
    compute_index_ranges: list[str] = []
    getter_definitions: list[str] = []
    py_getsetdef_structs: list[str] = []
    compiled_args: list[str] = []
    apply_with_saved_before: list[str] = []
    apply_with_saved_after: list[str] = []
    apply_functional_args: list[str] = []
    apply_functional_args_ref_types: list[str] = []
    # Maps the name of an input of the forward operator to its position among the
    # differentiable inputs (the index into needs_input_grad).
    input_name_to_idx: dict[str, int] = {}

    for idx, arg in enumerate(info.args_with_derivatives):
        if arg.type in TENSOR_LIST_LIKE_CTYPES:
            size = f"{arg.name}_size_"
            saved_list_sizes.append(f"size_t {arg.name}_size_;")
            apply_functional_args.append(f"{arg.name}_size_")
            apply_functional_args_ref_types.append("size_t")
        else:
            size = "1"
        compute_index_ranges.append(f"auto {arg.name}_ix = gen.range({size});")
        input_name_to_idx[arg.name] = idx

    def save_var(var: Any, is_output: bool) -> None:
        name = var.nctype.name
        ctype = var.nctype.type
        type_str = ctype.cpp_type()
        should_append_getsetdef = True
        should_append_raw_getsetdef = False
        visit_name = name
        uses_cpp_saved_variable_cls = False
        unpacked_ref_type = None

        if type_str in (TENSOR, OPTIONAL_TENSOR, MUTREF_OPTIONAL_TENSOR) or (type_str == SCALAR and is_output):
            uses_cpp_saved_variable_cls = True
            saved_variables.append(f"SavedVariable {name}_;")
            release_variables.append(f"{name}_.reset_data();")
            ptr = "getptr()" if is_output else ""
            unpack.append(f"auto {name} = {name}_.unpack({ptr});")
            getter_definitions.append(
                GETTER_DEFINITION_SAVEDVAR.substitute(op=info.op, name=name, body=GETTER_BODY_SAVEDVAR)
            )
            getter_definitions.append(
                GETTER_DEFINITION_RAW_SAVEDVAR.substitute(op=info.op, name=name, body=GETTER_BODY_RAW_SAVEDVAR)
            )
            should_append_raw_getsetdef = True
            visit_name = f"{name}_"
            unpacked_ref_type = "Tensor&"
        elif type_str in (TENSOR_LIST, ITENSOR_LIST_REF, VECTOR_TENSOR):
            # See torchgen's note [nuanced return type of out-of-place foreach functions]:
            # only a foreach function's output may be saved as std::vector<Tensor>.
            if type_str == VECTOR_TENSOR and not (_is_foreach(info) and is_output):
                raise AssertionError("VectorCType(BaseCType(tensorT)) requires foreach function and is_output")
            uses_cpp_saved_variable_cls = True
            saved_variables.append(f"std::vector<SavedVariable> {name}_;")
            saved_variables.append(f"bool {name}_released_ = false;")
            release_variables.append(f"{name}_.clear();")
            release_variables.append(f"{name}_released_ = true;")
            ptr = "getptr()" if is_output else "nullptr"
            unpack.append(f"auto {name} = unpack_list({name}_, {ptr});")
            asserts.append(f"TORCH_CHECK(!{name}_released_, ERR_BACKWARD_TWICE);")
            getter_definitions.append(
                GETTER_DEFINITION_VEC_SAVEDVAR.substitute(op=info.op, name=name, body=GETTER_BODY_VEC_SAVEDVAR)
            )
            getter_definitions.append(
                GETTER_DEFINITION_RAW_VEC_SAVEDVAR.substitute(op=info.op, name=name, body=GETTER_BODY_RAW_VEC_SAVEDVAR)
            )
            should_append_raw_getsetdef = True
            visit_name = f"{name}_"
            unpacked_ref_type = "std::vector<Tensor>&"
        elif type_str == LIST_OPTIONAL_TENSOR:
            uses_cpp_saved_variable_cls = True
            saved_variables.append(f"std::vector<SavedVariable> {name}_;")
            saved_variables.append(f"bool {name}_released_ = false;")
            release_variables.append(f"{name}_.clear();")
            release_variables.append(f"{name}_released_ = true;")
            unpack.append(f"auto {name} = unpack_opt_list({name}_);")
            asserts.append(f"TORCH_CHECK(!{name}_released_, ERR_BACKWARD_TWICE);")
            getter_definitions.append(
                GETTER_DEFINITION_VEC_SAVEDVAR.substitute(op=info.op, name=name, body=GETTER_BODY_VEC_SAVEDVAR)
            )
            getter_definitions.append(
                GETTER_DEFINITION_RAW_VEC_SAVEDVAR.substitute(op=info.op, name=name, body=GETTER_BODY_RAW_VEC_SAVEDVAR)
            )
            should_append_raw_getsetdef = True
            visit_name = f"{name}_"
            unpacked_ref_type = "torch::List<std::optional<Tensor>>&"
        elif type_str == INT_ARRAY_REF:
            saved_variables.append(f"std::vector<int64_t> {name};")
            getter_definitions.append(
                GETTER_DEFINITION.substitute(op=info.op, name=name, body=GETTER_BODY_ARRAYREF_LONG)
            )
        elif type_str == SYMINT_ARRAY_REF:
            saved_variables.append(f"std::vector<c10::SymInt> {name};")
            getter_definitions.append(
                GETTER_DEFINITION.substitute(op=info.op, name=name, body=GETTER_BODY_ARRAYREF_SYMINT)
            )
        elif type_str in (OPTIONAL_INT_ARRAY_REF_T, OPTIONAL_INT_ARRAY_REF):
            saved_variables.append(f"c10::OptionalArray<int64_t> {name};")
            getter_definitions.append(
                GETTER_DEFINITION_OPT_ARRAYREF.substitute(op=info.op, name=name, body=GETTER_BODY_ARRAYREF_LONG)
            )
        elif type_str in (OPTIONAL_SYMINT_ARRAY_REF_T, OPTIONAL_SYMINT_ARRAY_REF):
            saved_variables.append(f"c10::OptionalArray<c10::SymInt> {name};")
            getter_definitions.append(
                GETTER_DEFINITION_OPT_ARRAYREF.substitute(op=info.op, name=name, body=GETTER_BODY_ARRAYREF_SYMINT)
            )
        elif type_str == OPTIONAL_DOUBLE_ARRAY_REF:
            saved_variables.append(f"c10::OptionalArray<double> {name};")
            getter_definitions.append(
                GETTER_DEFINITION_OPT_ARRAYREF.substitute(op=info.op, name=name, body=GETTER_BODY_ARRAYREF_DOUBLE)
            )
        elif type_str == LONG:
            saved_variables.append(f"{type_str} {name} = 0;")
            getter_definitions.append(GETTER_DEFINITION.substitute(op=info.op, name=name, body=GETTER_BODY_INT64_T))
        elif type_str == SYMINT:
            saved_variables.append(f"c10::SymInt {name};")
            getter_definitions.append(GETTER_DEFINITION.substitute(op=info.op, name=name, body=GETTER_BODY_SYMINT))
        elif type_str == STRING:
            saved_variables.append(f"std::string {name};")
            getter_definitions.append(GETTER_DEFINITION.substitute(op=info.op, name=name, body=GETTER_BODY_STRING))
        elif type_str == OPTIONAL_STRING:
            saved_variables.append(f"std::optional<std::string> {name};")
            getter_definitions.append(GETTER_DEFINITION_OPT.substitute(op=info.op, name=name, body=GETTER_BODY_STRING))
        elif type_str == SCALAR_ARRAY_REF:
            saved_variables.append(f"std::vector<at::Scalar> {name};")
            unpacked_ref_type = "std::vector<at::Scalar>&"
            saved_variables.append(f"bool {name}_released_ = false;")
            # torchgen clears the vector but never sets {name}_released_ here.
            release_variables.append(f"{name}.clear();")
            getter_definitions.append(
                GETTER_DEFINITION_VEC_SCALAR.substitute(op=info.op, name=name, body=GETTER_BODY_VEC_SCALAR)
            )
        else:
            # torchgen refuses to save what looks like a non-owning reference.
            if not (
                "ref" not in type_str.lower()
                and "view" not in type_str.lower()
                and "*" not in type_str
                and "&" not in type_str
            ):
                raise AssertionError(f"{type_str} looks like it contains a non-owning reference")
            saved_variables.append(f"{type_str} {name};")

            if type_str in MISC_GETTER_DEFS:
                getter_def, body = MISC_GETTER_DEFS[type_str]
                getter_definitions.append(getter_def.substitute(op=info.op, name=name, body=body))
            else:
                # Types without python bindings yet: TypeAndSize, at::ScalarType,
                # TensorOptions, TensorGeometry, std::vector<std::vector<int64_t>>, ...
                should_append_getsetdef = False

        if should_append_getsetdef:
            py_getsetdef_structs.append(PY_GETSETDEF_STRUCT.substitute(op=info.op, name=name))
        if should_append_raw_getsetdef:
            py_getsetdef_structs.append(PY_RAW_GETSETDEF_STRUCT.substitute(op=info.op, name=name))

        if uses_cpp_saved_variable_cls:
            compiled_args.append(f"args.collect({visit_name}, {'true' if is_output else 'false'});")
        else:
            compiled_args.append(f"args.collect({visit_name});")
        apply_with_saved_before.append(f"saved.before({visit_name});")
        apply_with_saved_after.append(f"saved.after({visit_name});")

        if unpacked_ref_type is None:
            unpacked_ref_type = f"{saved_variables[-1].split(' ')[0]}&"
        apply_functional_args.append(str(name))
        apply_functional_args_ref_types.append(unpacked_ref_type)

    for var in sorted(info.all_saved_inputs, key=lambda sa: str(sa.nctype.name)):
        save_var(var, is_output=False)
    for var in sorted(info.all_saved_outputs, key=lambda sa: str(sa.nctype.name)):
        save_var(var, is_output=True)

    # See Note [Thread Safety on Autograd Node]
    if len(release_variables) > 0:
        thread_lock = "std::lock_guard<std::mutex> lock(mutex_);"
    else:
        thread_lock = ""

    if uses_retain_variables(info):
        apply_functional_args.append("retain_variables")
        apply_functional_args_ref_types.append("bool")
        will_release_variables = WILL_RELEASE_VARIABLES.substitute()
    else:
        will_release_variables = ""

    body: list[str] = []

    if uses_single_grad(info):
        body.append("const auto& grad = grads[0];")
    else:
        # Aliases for the gradients named after returned values.
        available = list(info.available_named_gradients)
        body.extend(
            f"const auto& {name} = grads[{available.index(name)}];" for name in sorted(info.used_named_gradients)
        )

    inner = _inner_templates.get()

    def emit_derivative(derivative: Any, args_with_derivatives: Sequence[Any]) -> tuple[bool, str]:
        formula = derivative.formula
        var_names = derivative.var_names
        if inner is not None:
            return _emit_derivative_before_2_6(inner, info, formula, var_names, args_with_derivatives)

        if len(var_names) == 1:
            checks_any_grad_defined = False
            if "not_implemented" not in formula:
                matching_args = [arg for arg in args_with_derivatives if arg.name == var_names[0]]
                if len(matching_args) == 1:
                    # Undefined-grad support when the input is a Tensor.
                    arg = matching_args[0]
                    if _is_schema_argument(arg.argument) and str(arg.argument.type) in ("Tensor", "Tensor?"):
                        formula = "any_grad_defined ? (" + formula + ") : Tensor()"
                        checks_any_grad_defined = True
            if info.name.startswith("_foreach_"):
                derivative_template = DERIVATIVE_SINGLE_FOREACH
            else:
                derivative_template = DERIVATIVE_SINGLE
            return (
                checks_any_grad_defined,
                derivative_template.substitute(
                    name=var_names[0],
                    derivative=formula,
                    idx=input_name_to_idx[var_names[0]],
                ),
            )

        if "grad_input_mask" in formula:
            masks = [f"needs_input_grad[{input_name_to_idx[name]}]," for name in var_names]
            grad_input_mask = GRAD_INPUT_MASK.substitute(n=len(var_names), masks=masks)
        else:
            grad_input_mask = ""
        needs_input_grad = " || ".join(f"needs_input_grad[{input_name_to_idx[name]}]" for name in var_names)
        copy_ranges: list[str] = []
        for i, n in enumerate(var_names):
            copy_ranges.append(DERIVATIVE_MULTI_COPY_RANGE.substitute(name=n, i=i, idx=input_name_to_idx[n]))
        return False, DERIVATIVE_MULTI.substitute(
            needs_input_grad=needs_input_grad,
            copy_ranges=copy_ranges,
            derivative=formula,
            grad_input_mask=grad_input_mask,
        )

    masks: list[str] = []
    if inner is not None:  # before 2.6 the saved variables were unpacked in the body
        body.extend(unpack)

    need_any_grad_defined_var = False
    for derivative in info.derivatives:
        checks_any_grad_defined, derivative_text = emit_derivative(derivative, info.args_with_derivatives)
        body.append(derivative_text)
        need_any_grad_defined_var |= checks_any_grad_defined

    for name in input_name_to_idx:
        masks.append(f"task_should_compute_output({{ {name}_ix }}),")

    # Single-output formulas check whether grads are defined: compute it once, before them.
    if need_any_grad_defined_var:
        body.insert(-len(info.derivatives), "bool any_grad_defined = any_variable_defined(grads);")

    if info.name in UNTRACEABLE_FUNCTIONS:
        superclass = "Node"
    else:
        superclass = "TraceableFunction"

    all_getsetdef_structs = ",\n".join(py_getsetdef_structs) + "," if len(py_getsetdef_structs) != 0 else ""
    all_getter_definitions = "\n".join(getter_definitions)

    compute_needs_input_grad = COMPUTE_NEEDS_INPUT_GRAD.substitute(
        n=len(masks), compute_index_ranges=compute_index_ranges, masks=masks
    )
    apply_functional_args_signature = [
        f"{T} {x}" for T, x in zip(apply_functional_args_ref_types, apply_functional_args)
    ]
    get_packed_args = "\n".join(f"packed_args.pack({name});" for name in apply_functional_args)
    unpack_ivalues = []
    for typ, name in zip(apply_functional_args_ref_types, apply_functional_args):
        typ = typ.removesuffix("&")
        unpack_ivalues.append(f"auto {name} = packed_args.unpack<{typ}>();")

    schema_args = [f"std::array<bool, {len(input_name_to_idx)}>"]
    for typ in apply_functional_args_ref_types:
        typ = typ.removesuffix("&")
        typ = typ.removeprefix("const")
        schema_args.append(typ.strip())
    compute_schema = ["std::vector<at::TypePtr> schema = {"]
    for schema_arg in schema_args:
        compute_schema.append(f"  torch::dynamo::autograd::IValuePacker<{schema_arg}>::packed_type(),")
    compute_schema.append("};")

    return template.substitute(
        unpacks="\n".join(unpack),
        op=info.op,
        compute_schema="\n".join(compute_schema),
        apply_functional_args=apply_functional_args,
        apply_functional_args_signature=apply_functional_args_signature,
        compute_needs_input_grad=compute_needs_input_grad,
        num_inputs=len(input_name_to_idx),
        unpack_ivalues="\n".join(unpack_ivalues),
        compute_index_ranges=compute_index_ranges,
        saved_variables=saved_variables,
        release_variables=release_variables,
        saved_list_sizes=saved_list_sizes,
        asserts=asserts,
        thread_lock=thread_lock,
        will_release_variables=will_release_variables,
        body=body,
        superclass=superclass,
        all_getter_definitions=all_getter_definitions,
        all_getsetdef_structs=all_getsetdef_structs,
        compiled_args=compiled_args,
        apply_with_saved_before=apply_with_saved_before,
        apply_with_saved_after=apply_with_saved_after,
        get_packed_args=get_packed_args,
        # the names of 2.6's templates (release_templates)
        num_vars=len(input_name_to_idx),
        unpacked_saved_vars=apply_functional_args,
        unpacked_saved_vars_signature=apply_functional_args_signature,
    )


def _emit_derivative_before_2_6(
    inner: Any, info: Any, formula: str, var_names: Sequence[str], args_with_derivatives: Sequence[Any]
) -> tuple[bool, str]:
    """emit_derivative of torchgen 2.1-2.5 (task_should_compute_output instead of needs_input_grad)."""
    if len(var_names) == 1:
        checks_any_grad_defined = False
        if "not_implemented" not in formula:
            matching_args = [arg for arg in args_with_derivatives if arg.name == var_names[0]]
            if len(matching_args) == 1:
                arg = matching_args[0]
                if _is_schema_argument(arg.argument) and str(arg.argument.type) in ("Tensor", "Tensor?"):
                    formula = "any_grad_defined ? (" + formula + ") : Tensor()"
                    checks_any_grad_defined = True
        template = inner.single_foreach if info.name.startswith("_foreach_") else inner.single
        return checks_any_grad_defined, template.substitute(name=var_names[0], derivative=formula)
    if "grad_input_mask" in formula:
        masks = [f"task_should_compute_output({{ {n}_ix }})," for n in var_names]
        grad_input_mask = inner.grad_input_mask.substitute(masks=masks, n=len(var_names))
    else:
        grad_input_mask = ""
    idx_ranges = ", ".join(f"{n}_ix" for n in var_names)
    copy_ranges = [inner.multi_copy_range.substitute(name=n, i=i) for i, n in enumerate(var_names)]
    return False, inner.multi.substitute(
        idx_ranges=idx_ranges, copy_ranges=copy_ranges, derivative=formula, grad_input_mask=grad_input_mask
    )


def infos_with_derivatives_list(infos: Mapping[Any, Mapping[str, Any]]) -> list[Any]:
    """torchgen's get_infos_with_derivatives_list: every info that has an autograd node, in codegen order."""
    return [info for per_key in infos.values() for info in per_key.values() if info.args_with_derivatives]


def generate_node(info: Any, release: Any = None) -> GeneratedNode:
    """The Functions.h declaration and Functions.cpp definition of one info's node.

    release: a derivls.derivatives.releases.ReleaseRules, to render as that release's torchgen does."""
    if release is None:
        return GeneratedNode(
            op=info.op,
            declaration=process_function(info, FUNCTION_DECLARATION),
            definition=process_function(info, FUNCTION_DEFINITION),
        )
    from derivls.codegen.release_templates import inner_templates_for, templates_for
    from derivls.codegen.templates import legacy_block_indent

    declaration, definition = templates_for(release.codegen_templates)
    token = legacy_block_indent.set(release.codegen_legacy_indent)
    inner_token = _inner_templates.set(inner_templates_for(release.codegen_templates))
    try:
        return GeneratedNode(
            op=info.op,
            declaration=release.render(process_function(info, declaration)),
            definition=release.render(process_function(info, definition)),
        )
    finally:
        _inner_templates.reset(inner_token)
        legacy_block_indent.reset(token)


def generate_nodes(infos: Mapping[Any, Mapping[str, Any]] | Iterable[Any]) -> list[GeneratedNode]:
    """Every node, in torchgen's codegen order.

    ``infos`` is the loader's dict (FunctionSchema -> {dispatch key: info}); an iterable
    of infos is taken as already flattened, and infos without derivatives are skipped.
    """
    if isinstance(infos, Mapping):
        flat = infos_with_derivatives_list(infos)
    else:
        flat = [info for info in infos if info.args_with_derivatives]
    return [generate_node(info) for info in flat]
