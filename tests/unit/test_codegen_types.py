"""Every kind of saved attribute process_function knows, including kinds the real
derivatives.yaml does not use today, rendered by derivls and by torchgen.

The infos are torchgen's own, with their saved attributes replaced: this pins down
derivls's cpp_type()-string dispatch against torchgen's CType-equality dispatch."""

from __future__ import annotations

import dataclasses

import pytest

from derivls.codegen import nodes as derivls_nodes
from derivls.codegen import templates as T

g = pytest.importorskip("torchgen.packaged.autograd.gen_autograd_functions")
load = pytest.importorskip("torchgen.packaged.autograd.load_derivatives")
tt = pytest.importorskip("torchgen.api.types")
autograd = pytest.importorskip("torchgen.api.autograd")

TEMPLATES = ["FUNCTION_DECLARATION", "FUNCTION_DEFINITION", "PY_FUNCTION_PROPS_AND_GETTERS"]


def ctypes():
    B, O = tt.BaseCType, tt.OptionalCType
    return {
        "tensor": B(tt.tensorT),
        "opt_tensor": O(B(tt.tensorT)),
        "mutref_opt_tensor": tt.MutRefCType(O(B(tt.tensorT))),
        "scalar": B(tt.scalarT),
        "opt_scalar": O(B(tt.scalarT)),
        "tensor_list": B(tt.tensorListT),
        "itensor_list": B(tt.iTensorListRefT),
        "opt_tensor_list": tt.ListCType(O(B(tt.tensorT))),
        "int_array": B(tt.intArrayRefT),
        "symint_array": B(tt.symIntArrayRefT),
        "opt_int_array_t": B(tt.optionalIntArrayRefT),
        "opt_symint_array_t": B(tt.optionalSymIntArrayRefT),
        "opt_int_array": O(B(tt.intArrayRefT)),
        "opt_symint_array": O(B(tt.symIntArrayRefT)),
        "opt_double_array": O(tt.ArrayRefCType(B(tt.doubleT))),
        "long": B(tt.longT),
        "opt_long": O(B(tt.longT)),
        "symint": B(tt.SymIntT),
        "opt_symint": O(B(tt.SymIntT)),
        "double": B(tt.doubleT),
        "opt_double": O(B(tt.doubleT)),
        "bool": B(tt.boolT),
        "opt_bool": O(B(tt.boolT)),
        "string": B(tt.stringT),
        "opt_string": O(B(tt.stringT)),
        "scalar_array": tt.ArrayRefCType(B(tt.BaseCppType("at", "Scalar"))),
        "scalar_type": B(tt.scalarTypeT),
        "layout": B(tt.layoutT),
        "vec_vec_long": tt.VectorCType(tt.VectorCType(B(tt.longT))),
    }


@pytest.fixture(scope="module")
def base_infos(real_files):
    infos, _ = load.load_derivatives(str(real_files.derivatives), str(real_files.native), str(real_files.tags))
    by_op = {i.op: i for i in g.get_infos_with_derivatives_list(infos)}
    return by_op["MulBackward0"], by_op["ForeachNormBackward0"]


def with_saved(info, inputs=(), outputs=()):
    def attrs(pairs):
        return tuple(autograd.SavedAttribute(nctype=tt.NamedCType(n, t), expr=n) for n, t in pairs)

    return dataclasses.replace(info, all_saved_inputs=attrs(inputs), all_saved_outputs=attrs(outputs))


def assert_same(info):
    for name in TEMPLATES:
        expected = g.process_function(info, getattr(g, name))
        assert derivls_nodes.process_function(info, getattr(T, name)) == expected, name


@pytest.mark.parametrize("kind", list(ctypes()))
@pytest.mark.parametrize("as_output", [False, True], ids=["input", "output"])
def test_each_saved_kind(base_infos, kind, as_output):
    mul, _ = base_infos
    pair = [(f"v_{kind}", ctypes()[kind])]
    assert_same(with_saved(mul, outputs=pair) if as_output else with_saved(mul, inputs=pair))


def test_all_kinds_together_sorted_by_name(base_infos):
    mul, _ = base_infos
    pairs = [(f"z{i}_{k}", t) for i, (k, t) in enumerate(reversed(list(ctypes().items())))]
    assert_same(with_saved(mul, inputs=pairs[::2], outputs=pairs[1::2]))


def test_vector_of_tensors_only_for_foreach_outputs(base_infos):
    mul, foreach_norm = base_infos
    vec = [("result", tt.VectorCType(tt.BaseCType(tt.tensorT)))]
    assert_same(with_saved(foreach_norm, outputs=vec))
    for info in (with_saved(mul, outputs=vec), with_saved(foreach_norm, inputs=vec)):
        with pytest.raises(AssertionError):
            g.process_function(info, g.FUNCTION_DECLARATION)
        with pytest.raises(AssertionError, match="requires foreach function and is_output"):
            derivls_nodes.process_function(info, T.FUNCTION_DECLARATION)


@pytest.mark.parametrize(
    "ctype",
    [
        lambda: tt.ConstRefCType(tt.BaseCType(tt.tensorT)),
        lambda: tt.BaseCType(tt.BaseCppType("c10", "string_view_like")),
        lambda: tt.BaseCType(tt.BaseCppType("", "int64_t*")),
    ],
    ids=["const-ref", "view", "pointer"],
)
def test_non_owning_reference_is_refused(base_infos, ctype):
    mul, _ = base_infos
    info = with_saved(mul, inputs=[("x", ctype())])
    with pytest.raises(AssertionError, match="non-owning reference"):
        g.process_function(info, g.FUNCTION_DECLARATION)
    with pytest.raises(AssertionError, match="non-owning reference"):
        derivls_nodes.process_function(info, T.FUNCTION_DECLARATION)
