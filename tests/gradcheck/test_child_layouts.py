"""Inputs the gradcheck child makes by hand for ops whose arguments need a layout or structure a schema cannot say
(derivls/gradcheck/child/layouts.py, run here in-process with the installed torch: no compiler, each formula written
in Python as the yaml entry says it): the nested constructors, and the ops with a sparse argument held constant beside
the strided ones that vary; their outputs seen flat, their formulas given grads in the layout autograd gives them."""

from __future__ import annotations

import types

import pytest

from tests.gradcheck.conftest import unit_request

pytestmark = pytest.mark.gradcheck

CONSTRUCTORS = [
    ("_nested_tensor_from_tensor_list", "list"),
    ("_nested_tensor_from_mask", "t"),
    ("_nested_from_padded", "padded"),
    ("_nested_view_from_buffer", "self"),
    ("_nested_view_from_buffer_copy", "self"),
]


def _unit(torch, aten, *wrt, lists=(), overload="default"):
    unit = unit_request(torch, aten, overload, *wrt)
    unit["wrt"] = [(name, name in lists) for name in wrt]
    unit["fw_inputs"] = []  # (the backward formula only)
    unit["backward"] = "backward"
    outputs = getattr(getattr(torch.ops.aten, aten), overload)._schema.returns
    unit["outputs"] = [r.name or f"result{i}" for i, r in enumerate(outputs)]
    unit["grads"] = [0]
    return unit


def _check(child, torch, unit, backward):
    """check_samples of a unit no OpInfo sample reaches, with `backward` as its compiled backward."""
    return child.check_samples(torch, types.SimpleNamespace(backward=backward), unit, [], {})


@pytest.mark.parametrize("aten, wrt", CONSTRUCTORS)
def test_a_nested_constructor_gets_inputs_made_for_it_that_it_takes(child, torch, aten, wrt):
    unit = _unit(torch, aten, wrt, lists=("list",))
    overload = getattr(torch.ops.aten, aten).default
    (sample,) = child.layout_samples(torch, unit, overload)
    out = child.call_overload(torch, overload, list(sample["args"]))
    assert out.is_nested and [tuple(c.shape) for c in out.unbind()] == [(3, 2), (2, 2)]
    assert child.leaf_slots(torch, unit, list(sample["args"]))  # (a floating tensor to vary)


def _to_padded_formula(torch, scale):
    """_nested_tensor_from_mask's `t: grad.to_padded_tensor_symint(0, t.sym_sizes())` (times `scale`)."""

    def backward(t, mask, mask_check, result, grads, wanted):
        (grad,) = grads
        if grad is None:  # (gradcheck's undefined grad)
            return [None]
        assert grad.is_nested  # (the grad autograd gives the node: the nested output's)
        return [scale * grad.to_padded_tensor(0.0, t.shape)]

    return backward


def test_a_nested_constructor_is_checked_through_the_flat_view_and_a_wrong_formula_still_fails(child, torch):
    unit = _unit(torch, "_nested_tensor_from_mask", "t")
    result = _check(child, torch, unit, _to_padded_formula(torch, 1.0))
    assert result["status"] == "passed", result
    assert result["inputs"] == "layout" and result["checks"] == {"backward": 1}
    result = _check(child, torch, unit, _to_padded_formula(torch, 2.0))
    assert result["status"] == "failed" and result["failures"][0]["input"] == "t"


def test_a_list_of_tensors_made_nested_has_each_element_checked(child, torch):
    def unbind(tensors, result, grads, wanted):
        (grad,) = grads
        if grad is None:
            return [None] * len(tensors)
        return [grad.unbind()[i] if wanted >> i & 1 else None for i in range(len(tensors))]

    unit = _unit(torch, "_nested_tensor_from_tensor_list", "list", lists=("list",))
    result = _check(child, torch, unit, lambda *a: unbind(a[0], *a[-3:]))
    assert result["status"] == "passed" and result["checks"] == {"backward": 2}, result


def _sparse_mask_formula(torch, seen, scale):
    """sparse_mask's `self: sparse_mask_backward(grad, mask, self.layout())` for a strided self: the grad's values
    at the mask's pattern, dense (times `scale`); the grad's layout noted in `seen`."""

    def backward(self, mask, result, grads, wanted):
        (grad,) = grads
        if grad is None:
            return [None]
        seen.append(grad.layout)
        return [scale * grad.to_dense()]

    return backward


def test_a_sparse_argument_is_held_constant_and_the_formula_gets_the_sparse_grad_autograd_gives(child, torch):
    unit = _unit(torch, "sparse_mask", "self")
    seen = []
    result = _check(child, torch, unit, _sparse_mask_formula(torch, seen, 1.0))
    assert result["status"] == "passed" and result["checks"] == {"backward": 1}, result
    x = torch.rand(3, 4, dtype=torch.float64, requires_grad=True)  # (what autograd gives sparse_mask's node)
    real = []
    out = x.sparse_mask(torch.eye(3, 4, dtype=torch.float64).to_sparse())
    out.register_hook(lambda grad: real.append(grad.layout))
    out.to_dense().sum().backward()
    assert set(seen) == set(real) == {torch.sparse_coo}
    result = _check(child, torch, unit, _sparse_mask_formula(torch, [], -1.0))
    assert result["status"] == "failed", result


def test_only_the_strided_inputs_of_a_sample_with_a_sparse_argument_are_varied(child, torch):
    def sampled_addmm(self, mat1, mat2, beta, alpha, result, grads, wanted):
        (grad,) = grads
        if grad is None:
            return [None, None, None]
        dense = grad.to_dense()
        return [beta * grad, alpha * dense @ mat2.mH if wanted & 2 else None, alpha * mat1.mH @ dense]

    unit = _unit(torch, "sparse_sampled_addmm", "self", "mat1", "mat2")
    unit["args"] = ["self", "mat1", "mat2", "beta", "alpha"]
    (sample,) = child.layout_samples(torch, unit, torch.ops.aten.sparse_sampled_addmm.default)
    assert "held constant" in sample["origin"] and sample["args"][0].layout == torch.sparse_csr
    result = _check(child, torch, unit, sampled_addmm)
    assert result["status"] == "passed", result
    assert result["checks"] == {"backward": 2}  # (mat1 and mat2; the sparse self is not varied)
    assert "errors" not in result  # (a dense self in its place is no call of the op)


def _values_formula(torch, flip):
    """values' `self: values_backward(grad, self)`: the grad at self's indices, in self's layout (`flip`: at the
    indices in reverse order, a wrong formula)."""

    def backward(self, result, grads, wanted):
        (grad,) = grads
        if grad is None:
            return [None]
        values = grad.flip(0) if flip else grad
        if self.layout == torch.sparse_csr:
            return [torch.sparse_csr_tensor(self.crow_indices(), self.col_indices(), values, self.shape)]
        return [torch.sparse_coo_tensor(self._indices(), values, self.shape)]

    return backward


def test_a_sparse_input_is_varied_through_its_values_at_fixed_indices_and_a_wrong_formula_still_fails(child, torch):
    unit = _unit(torch, "values", "self")
    unit["id"] = "values.default"
    result = _check(child, torch, unit, _values_formula(torch, flip=False))
    assert result["status"] == "passed" and result["checks"] == {"backward": 2}, result  # (COO and CSR)
    assert result["failures"] == []
    result = _check(child, torch, unit, _values_formula(torch, flip=True))
    assert result["status"] == "failed" and result["failures"][0]["input"] == "self", result


def test_a_grad_with_respect_to_a_sparse_input_is_compared_on_its_values(child, torch):
    sparse = torch.sparse_coo_tensor(
        torch.tensor([[0, 1, 2], [2, 0, 1]]), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), (3, 3)
    ).coalesce()
    dense = torch.arange(9, dtype=torch.float64).reshape(3, 3)
    assert child.on_values(torch, dense, sparse).tolist() == [2.0, 3.0, 7.0]  # (dense[0, 2], [1, 0], [2, 1])
    assert child.on_values(torch, dense.to_sparse_csr(), sparse.to_sparse_csr()).tolist() == [2.0, 3.0, 7.0]
    ones = child.with_values(torch, sparse, torch.ones(3, dtype=torch.float64))
    assert ones.layout == torch.sparse_coo and ones.to_dense().tolist() == (sparse.to_dense() != 0).double().tolist()


def test_samples_made_for_a_layout_are_checked_as_made_without_variants(child, torch, monkeypatch):
    def no_variants(*args):
        raise AssertionError("variants of a sample made for its layout")

    monkeypatch.setitem(child.check_samples.__globals__, "variants", no_variants)
    monkeypatch.setitem(child.check_samples.__globals__, "operand_variants", no_variants)
    result = _check(child, torch, _unit(torch, "sparse_mask", "self"), _sparse_mask_formula(torch, [], 1.0))
    assert result["status"] == "passed" and result["samples"] == 1, result

    # (a variant of a compressed tensor's indices is an invalid tensor: torch crashes on it, it does not raise)
    def compressed(crow, col, values, size, dtype, layout, device, pin_memory, result, grads, wanted):
        (grad,) = grads
        return [None, None, None if grad is None else grad.to_dense().sparse_mask(result).values()]

    unit = _unit(
        torch,
        "sparse_compressed_tensor",
        "compressed_indices",
        "plain_indices",
        "values",
        overload="comp_plain_value_size",
    )
    result = _check(child, torch, unit, compressed)
    assert result["status"] == "passed" and result["samples"] == 1 and result["checks"] == {"backward": 1}, result


def _chunk_formula(torch, seen, reverse):
    """chunk's AutogradNestedTensor `self: chunk_backward_nested(grads, self, chunks, dim)`: the grads, zeros for an
    undefined one, concatenated along dim (`reverse`: in reverse order, a wrong formula); the grads' layouts seen."""

    def backward(self, chunks, dim, result, grads, wanted):
        assert self.layout == torch.jagged  # (what chunk_backward_nested asserts)
        seen.extend(g.layout for g in grads if g is not None)
        parts = [g if g is not None else torch.zeros_like(r) for g, r in zip(grads, result)]
        return [torch.cat(parts[::-1] if reverse else parts, dim)]

    return backward


def test_a_formula_for_jagged_nested_tensors_is_checked_on_one_and_a_wrong_formula_still_fails(child, torch):
    unit = {**_unit(torch, "chunk", "self"), "layout": "nested"}  # (its AutogradNestedTensor formula)
    seen = []
    result = _check(child, torch, unit, _chunk_formula(torch, seen, reverse=False))
    assert result["status"] == "passed" and result["inputs"] == "layout", result
    assert seen and set(seen) == {torch.jagged}  # (the outputs' grads are jagged, as autograd gives them)
    result = _check(child, torch, unit, _chunk_formula(torch, [], reverse=True))
    assert result["status"] == "failed", result
