"""Operands OpInfo's samples lack (derivls/gradcheck/child/operands.py, in-process, no compiler), found by the releases
checking each other (issue 52): a floating input given as integers, every other element negative, where the op
promotes it, another input is left to vary and torch's own autograd runs on it (ldexp's `other`: torch 2.13's formula computes 2**-1 in integers);
a NaN in an input, where the op ignores it (fmax: torch 2.14's formula gives the NaN input the gradient)."""

from __future__ import annotations

import pytest

from tests.gradcheck.conftest import unit_request

pytestmark = pytest.mark.gradcheck


def _sample(torch, *args) -> dict:
    return {"dtype": args[0].dtype, "args": args, "kwargs": {}, "origin": "test", "skip": {}, "transforms": {}}


def _made(child, torch, aten, overload, *args, wrt=("self", "other")):
    unit = unit_request(torch, aten, overload, *wrt)
    op = getattr(getattr(torch.ops.aten, aten), overload)
    return {m["variant"]: m for m in child.operand_variants(torch, op, unit, [_sample(torch, *args)])}


def test_a_floating_operand_is_given_as_integers_with_negative_values_where_the_op_promotes_it(child, torch):
    x = torch.tensor([1.5, -0.7, 2.0, 0.2], dtype=torch.float64)
    other = torch.tensor([1.2, 2.0, -3.4, 0.1], dtype=torch.float64)
    made = _made(child, torch, "ldexp", "Tensor", x, other)
    integers = made["other as integers"]["args"][1]
    assert integers.dtype == torch.int64 and integers.tolist() == [-2, 2, -4, 0]
    assert made["other as integers"]["args"][0] is x  # (the other input, left to vary)
    assert made["other as integers"]["points"] is False


def test_no_integer_operand_for_an_op_of_one_input_nor_where_the_op_rejects_it(child, torch):
    x = torch.tensor([0.3, 0.5], dtype=torch.float64)
    assert not any("integers" in name for name in _made(child, torch, "acos", "default", x, wrt=("self",)))
    # lerp's end must have self's dtype: lerp(x, int end, w) raises, so none is made for it
    made = _made(child, torch, "lerp", "Tensor", x, x + 1, x / 2, wrt=("self", "end", "weight"))
    assert "end as integers" not in made


def test_no_integer_operand_where_torchs_own_backward_raises_on_it(child, torch):
    # torch.addr(m, v1, integer v2) runs, its backward raises (addmv of Long and Double): the formula's would too
    m, v1, v2 = torch.zeros(2, 3, dtype=torch.float64), torch.ones(2, dtype=torch.float64), torch.ones(3).double()
    made = _made(child, torch, "addr", "default", m, v1, v2, wrt=("self", "vec1", "vec2"))
    assert "vec1 as integers" not in made and "vec2 as integers" not in made
    assert "a NaN in self" not in made  # (addr propagates a NaN of self)


def test_a_nan_is_put_in_an_input_only_where_the_op_ignores_it(child, torch):
    x = torch.tensor([0.3, -0.5, 2.0], dtype=torch.float64)
    y = torch.tensor([1.0, -1.5, 0.5], dtype=torch.float64)
    made = _made(child, torch, "fmax", "default", x, y)
    assert {"a NaN in self", "a NaN in other"} <= set(made)
    assert (
        torch.isnan(made["a NaN in other"]["args"][1][0]) and not torch.isnan(made["a NaN in other"]["args"][0]).any()
    )
    assert not any(name.startswith("a NaN") for name in _made(child, torch, "maximum", "default", x, y))  # (propagated)


def test_an_inplace_unit_an_internal_op_and_a_backward_function_get_none(child, torch):
    x = torch.tensor([0.3, -0.5, 2.0], dtype=torch.float64)
    unit = {**unit_request(torch, "fmax", "default", "self", "other"), "inplace": True}
    assert child.operand_variants(torch, torch.ops.aten.fmax.default, unit, [_sample(torch, x, x + 1)]) == []
    unit = unit_request(torch, "_softmax", "default", "self")
    assert child.operand_variants(torch, torch.ops.aten._softmax.default, unit, [_sample(torch, x, 0, False)]) == []


def test_an_output_whose_formula_reads_no_tangent_that_is_set_gets_a_zero_tangent(child, torch):
    # nextafter(integer self, other) varying other: its forward formula reads self_t only, so the compiled function
    # (VariableType's guard) returns no tangent, which is a zero one, as torch's own forward AD gives
    import types

    unit = {
        **unit_request(torch, "nextafter", "default", "other"),
        "outputs": ["result"],
        "grads": [0],
        "backward": "backward",
        "forward": "forward",
    }

    def backward(self, other, result, grads, mask):
        return [None, None if grads[0] is None else torch.zeros_like(other)]

    def forward(self, other, result, tangents):
        return [None]  # (an undefined tensor from the compiled function)

    self = torch.tensor([1, -2, 3])
    other = torch.tensor([0.5, 0.25, 4.0], dtype=torch.float64)
    sample = {**_sample(torch, self, other), "dtype": torch.float64}
    ns = types.SimpleNamespace(backward=backward, forward=forward)
    result = child.check_samples(torch, ns, unit, [sample], {"variants": False})
    assert result["status"] == "passed", (result.get("reason"), result.get("errors"), result["failures"])
    assert result["checks"] == {"backward": 1, "forward": 1}


def test_operands_and_index_edges_are_made_from_samples_of_any_strides(child, torch):
    # (OpInfo's samples may be transposed: a NaN or a changed index written through view(-1) of a clone that kept
    # the sample's strides raised, and the whole unit was a harness error: ormqr, lu_unpack, upsample_nearest3d)
    x = torch.tensor([[0.3, -0.5, 2.0], [1.0, 0.25, -1.0]], dtype=torch.float64).T
    y = torch.tensor([[1.0, -1.5, 0.5], [0.5, 2.0, -0.75]], dtype=torch.float64).T
    made = _made(child, torch, "fmax", "default", x, y)
    assert torch.isnan(made["a NaN in self"]["args"][0]).sum() == 1
    weight = torch.rand(5, 3, dtype=torch.float64)
    index = torch.tensor([[0, 1], [2, 3]]).T  # (not contiguous)
    op = torch.ops.aten.embedding.default
    names = {name for name, *_ in child.index_candidates(torch, op, [weight, index, -1, False, False])}
    assert "repeated indices in indices" in names, names
