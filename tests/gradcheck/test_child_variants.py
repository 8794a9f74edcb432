"""Inputs where mistakes live (derivls/gradcheck/child/ in-process, no compiler): special values go into
floating inputs only where finite differences are reliable, complex samples reach all four quadrants, a Scalar
argument left at its default gets another value, the samples are the same at every run; an overload no OpInfo
of its own name reaches gets the samples of the OpInfos the reach index lists for it; samples are kept per
dtype. The call's structure moves where OpInfo's samples leave it: a negative dim, keepdim flipped, an int or
optional argument away from its default, negative indices where the op wraps them (each only where the op accepts
it); OpInfo's reference_inputs add the kinds of call its sample_inputs lack."""

from __future__ import annotations

import pytest

from tests.gradcheck.conftest import unit_request

pytestmark = pytest.mark.gradcheck


def _sample(torch, *args) -> dict:
    return {
        "dtype": next(a.dtype for a in args if isinstance(a, torch.Tensor)),
        "args": args,
        "kwargs": {},
        "origin": "test",
        "skip": {},
        "transforms": {},
    }


def test_special_values_are_kept_only_where_the_op_and_its_finite_differences_are_finite_and_stable(child, torch):
    acos = torch.ops.aten.acos.default
    x = torch.full((13,), 0.3, dtype=torch.float64)
    points = dict(enumerate(child.SPECIAL_REAL))
    values, kept, dropped = child.with_points(torch, acos, [x], 0, points)
    moved = {float(v) for v in values[0] if v != 0.3}
    assert {0.0, 0.5, -0.5, 0.999, -0.999} <= moved  # inside acos's domain
    assert not {1.0, -1.0, 2.0, -2.0, 3.0, -3.0} & moved  # its edges (an infinite slope) and outside (nan)
    assert dropped == 13 - kept


def test_a_kink_a_jump_and_a_branch_cut_are_not_stable_points(child, torch):
    x = torch.tensor([0.0, 0.7], dtype=torch.float64)
    assert child.unstable_elements(torch, torch.ops.aten.abs.default, [x], 0, [0, 1]) == {0}
    assert child.unstable_elements(torch, torch.ops.aten.floor.default, [x + 1.0], 0, [0, 1]) == {0}
    z = torch.tensor([-2.0 + 0j, -2.0 + 1j], dtype=torch.complex128)  # log's cut: the negative real axis
    assert child.unstable_elements(torch, torch.ops.aten.log.default, [z], 0, [0, 1]) == {0}


def test_a_value_found_inside_another_op_on_a_tie_is_moved_a_little_off_it_and_the_rest_is_kept(child, torch):
    # maximum of a tensor and a copy with a few equal elements (as an op's body may call it): but for the ties,
    # every element is stable
    maximum = torch.ops.aten.maximum.default
    x = torch.linspace(-1, 1, 12, dtype=torch.float64)
    other = x.clone() + 0.5
    other[[2, 7]] = x[[2, 7]]
    bad = child.unstable_elements(torch, maximum, [x, other], 0, range(12))
    assert bad == {2, 7}
    moved = child.nudged(torch, maximum, [x, other], 0, bad)
    assert moved is not None and moved is not x
    assert child.unstable_elements(torch, maximum, [moved, other], 0, range(12)) == set()
    changed = {i for i in range(12) if float(moved[i]) != float(x[i])}
    assert changed == {2, 7}
    assert all(0 < abs(float(moved[i] - x[i])) <= 0.2 * (1 + abs(float(x[i]))) for i in changed)
    assert torch.equal(child.nudged(torch, maximum, [x, other], 0, bad), moved)  # (seeded: the same at every run)


def test_no_nudge_when_most_elements_are_unreliable_or_the_input_is_not_floating(child, torch):
    maximum = torch.ops.aten.maximum.default
    x = torch.linspace(-1, 1, 6, dtype=torch.float64)
    assert child.nudged(torch, maximum, [x, x.clone()], 0, set(range(6))) is None  # (every element a tie)
    n = torch.arange(6)
    assert child.nudged(torch, maximum, [n, n.clone()], 0, {1}) is None


def test_complex_samples_get_negative_real_parts_in_all_four_quadrants(child, torch):
    acos = torch.ops.aten.acos.default
    unit = unit_request(torch, "acos", "default", "self")
    z = torch.complex(
        torch.linspace(0.2, 0.9, 8, dtype=torch.float64), torch.linspace(0.1, 0.8, 8, dtype=torch.float64)
    )
    made = child.variants(torch, acos, unit, [_sample(torch, z)])
    [quadrants] = [m for m in made if "four quadrants" in m["origin"]]
    moved = quadrants["args"][0]
    assert {(bool(v.real > 0), bool(v.imag > 0)) for v in moved.tolist()} == {
        (True, True),
        (False, True),
        (False, False),
        (True, False),
    }
    assert quadrants["points"]


def test_a_scalar_argument_left_at_its_default_gets_another_value_complex_for_complex_samples(child, torch):
    add = torch.ops.aten.add.Tensor
    unit = unit_request(torch, "add", "Tensor", "self", "other")
    real = child.variants(
        torch, add, unit, [_sample(torch, torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))]
    )
    assert [m["args"][2] for m in real if m["origin"].startswith("test, alpha=")] == [1.4]
    z = torch.ones(3, dtype=torch.complex128)
    made = child.variants(torch, add, unit, [_sample(torch, z, z)])
    [alpha] = [m["args"][2] for m in made if m["origin"].startswith("test, alpha=")]
    assert isinstance(alpha, complex) and alpha.imag != 0
    assert not any(m["points"] for m in made if "alpha" in m["origin"])  # (no stability check needed)


def test_the_samples_made_are_the_same_at_every_run(child, torch):
    asin = torch.ops.aten.asin.default
    unit = unit_request(torch, "asin", "default", "self")
    x = torch.linspace(-0.9, 0.9, 20, dtype=torch.float64)
    first = child.variants(torch, asin, unit, [_sample(torch, x)])
    second = child.variants(torch, asin, unit, [_sample(torch, x.clone())])
    assert [m["origin"] for m in first] == [m["origin"] for m in second] and first
    assert all(torch.equal(a["args"][0], b["args"][0]) for a, b in zip(first, second))


def test_an_overload_no_opinfo_of_its_name_reaches_gets_the_samples_of_those_the_reach_index_lists(child, torch):
    unit = unit_request(torch, "upsample_bilinear2d", "default", "self")
    assert child.find_samples(torch, [unit], 2) == {unit["id"]: []}
    reach = {"aten::upsample_bilinear2d.default": ["nn.functional.interpolate.bilinear"]}
    found = child.find_samples(torch, [unit], 2, reach)[unit["id"]]
    assert found and {s["origin"] for s in found} == {"nn.functional.interpolate.bilinear"}


def test_samples_are_kept_up_to_the_limit_per_dtype(child, torch):
    unit = unit_request(torch, "acos", "default", "self")
    found = child.find_samples(torch, [unit], 2)[unit["id"]]
    samples = [s for s in found if not s.get("reference")]  # (and up to REFERENCE_SAMPLES of reference_inputs)
    assert sorted(str(s["dtype"]) for s in samples) == ["torch.complex128"] * 2 + ["torch.float64"] * 2
    assert len(found) - len(samples) <= 2 * child.REFERENCE_SAMPLES


def test_a_jump_symmetric_about_the_point_is_not_a_stable_point(child, torch):
    x = torch.tensor([0.0, 0.7], dtype=torch.float64)  # frexp's mantissa jumps from -0.5 to 0.5 at 0
    mantissa = torch.ops.aten.frexp.Tensor
    assert child.unstable_elements(torch, mantissa, [x], 0, [0, 1]) == {0}


def _made(child, torch, overload, unit, *args) -> dict:
    return {m["variant"]: m for m in child.structure_of_samples(torch, overload, unit, [_sample(torch, *args)])}


def test_a_reduction_gets_a_negative_dim_with_the_same_output_and_keepdim_flipped(child, torch):
    max_dim = torch.ops.aten.max.dim
    unit = unit_request(torch, "max", "dim", "self")
    x = torch.arange(60, dtype=torch.float64).reshape(3, 4, 5).sin()
    made = _made(child, torch, max_dim, unit, x, 1)
    assert made["dim=-2"]["args"][:2] == (x, -2) and made["dim=-2"]["args"][2] is False
    assert made["keepdim=True"]["args"][1:] == (1, True)
    assert not any(m["points"] for m in made.values())  # (no special points: no stability check needed)


def test_an_optional_dim_left_none_gets_minus_one_and_an_optional_scalar_a_value(child, torch):
    var = torch.ops.aten.var.correction
    unit = unit_request(torch, "var", "correction", "self")
    made = _made(child, torch, var, unit, torch.linspace(0, 1, 12, dtype=torch.float64).reshape(3, 4))
    assert made["dim=[-1]"]["args"][1] == [-1]
    assert made[f"correction={child.OPTIONAL_NUMBER}"]["args"][2] == child.OPTIONAL_NUMBER
    assert made["keepdim=True"]["args"][3] is True


def test_an_int_left_at_its_default_gets_another_value_and_a_reduction_the_other_two(child, torch):
    diag_embed = torch.ops.aten.diag_embed.default
    unit = unit_request(torch, "diag_embed", "default", "self")
    made = _made(child, torch, diag_embed, unit, torch.ones(3, 3, dtype=torch.float64))
    assert made["offset=-1"]["args"][1] == -1
    bce = torch.ops.aten.binary_cross_entropy.default
    unit = unit_request(torch, "binary_cross_entropy", "default", "self", "target")
    p = torch.full((2, 3), 0.3, dtype=torch.float64)
    made = _made(child, torch, bce, unit, p, p)
    assert {v for v in made if v.startswith("reduction=")} == {"reduction=0", "reduction=2"}


def test_a_variant_the_op_rejects_or_makes_not_finite_is_dropped_never_kept(child, torch):
    max_dim = torch.ops.aten.max.dim

    class Refusing:  # max.dim that rejects keepdim=True and gives nan for a negative dim
        _schema = max_dim._schema

        def __call__(self, x, dim, keepdim=False):
            if keepdim:
                raise RuntimeError("keepdim=True is not supported")
            out = max_dim(x, dim, keepdim)
            return (out[0] * float("nan"), out[1]) if dim < 0 else out

    unit = unit_request(torch, "max", "dim", "self")
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    assert set(_made(child, torch, max_dim, unit, x, 1)) == {"dim=-1", "keepdim=True"}
    assert _made(child, torch, Refusing(), unit, x, 1) == {}


def test_negative_indices_are_made_only_where_the_op_wraps_them_to_the_same_output(child, torch):
    take = torch.ops.aten.take.default
    unit = unit_request(torch, "take", "default", "self")
    x = torch.arange(9, dtype=torch.float64).reshape(3, 3)
    index = torch.tensor([0, 4, 8, 2])
    made = _made(child, torch, take, unit, x, index)
    moved = made["negative indices in index"]["args"][1]
    assert moved.tolist() == [-9, 4, -1, 2] and torch.equal(take(x, moved), take(x, index))
    gather = torch.ops.aten.gather.default  # gather rejects negative indices: none made
    unit = unit_request(torch, "gather", "default", "self")
    made = _made(child, torch, gather, unit, x, 1, torch.tensor([[0, 1], [1, 2], [2, 0]]))
    assert not any(v.startswith("negative indices") for v in made)


def test_reference_inputs_add_samples_the_sample_inputs_lack_beyond_the_limit_and_seeded(child, torch):
    unit = unit_request(torch, "mul", "Tensor", "self", "other")
    first = child.find_samples(torch, [unit], 2)[unit["id"]]
    second = child.find_samples(torch, [unit], 2)[unit["id"]]
    reference = [s for s in first if s.get("reference")]
    assert len(first) - len(reference) == 4  # up to the limit of sample_inputs per dtype, and the reference ones
    assert reference and all(s["origin"].endswith("(reference_inputs)") for s in reference)
    assert len([s for s in reference if s["dtype"] == torch.float64]) <= child.REFERENCE_SAMPLES
    # (broadcasting or a 0-dim input: a kind of call the first sample_inputs do not have)
    assert any(len({tuple(t.shape) for t in s["args"][:2]}) > 1 for s in reference)
    assert [child.describe(torch, s["args"], s["kwargs"]) for s in first] == [
        child.describe(torch, s["args"], s["kwargs"]) for s in second
    ]
    assert all(torch.equal(a["args"][0], b["args"][0]) for a, b in zip(first, second))


def test_an_argument_that_changes_the_gradient_by_design_is_not_moved(child, torch):
    embedding = torch.ops.aten.embedding.default
    unit = unit_request(torch, "embedding", "default", "weight")
    weight = torch.linspace(0, 1, 15, dtype=torch.float64).reshape(5, 3)
    made = _made(child, torch, embedding, unit, weight, torch.tensor([0, 2, 4]))
    # (padding_idx = -1 is a sentinel; scale_grad_by_freq and sparse change the gradient test_ops compares)
    assert not any(v.startswith(("padding_idx", "scale_grad_by_freq", "sparse")) for v in made), set(made)


def test_a_reference_input_of_mixed_precision_is_not_used(child, torch):
    # cat's reference inputs include [float64, float64, float16] tensors: a float16 input's finite differences at
    # gradcheck's step are 0 (a "failure" of the shipped formula that is the harness's, not the formula's)
    from torch.testing._internal.common_methods_invocations import op_db

    (cat,) = [op for op in op_db if op.name == "cat" and not op.variant_test_name]
    samples = list(cat.sample_inputs("cpu", torch.float64, requires_grad=True))[:4]
    found = child.reference_samples(torch, cat, torch.float64, samples)
    assert found
    tensors = [t for s in found for t in child.sample_tensors(torch, s)]
    assert all(t.dtype == torch.float64 for t in tensors if t.is_floating_point() or t.is_complex())
    # (without the rule, the mixed one is among them)
    made = list(cat.reference_inputs("cpu", torch.float64, requires_grad=True))
    assert any(t.dtype == torch.float16 for s in made for t in child.sample_tensors(torch, s))


def test_a_variant_that_crashes_an_internal_op_is_tried_in_a_fork_and_dropped(child, torch):
    r2c = torch.ops.aten._fft_r2c.default  # never wraps a negative dim: torch 2.13 segfaults on one
    unit = unit_request(torch, "_fft_r2c", "default", "self")
    x = torch.linspace(0, 1, 24, dtype=torch.float64).reshape(2, 3, 4)
    made = _made(child, torch, r2c, unit, x, [2], 0, True)  # (this process survives to assert)
    assert child.unchecked_arguments(r2c) and not child.unchecked_arguments(torch.ops.aten.max.dim)
    assert not any(v.startswith("dim=") for v in made)


def test_a_flag_promising_something_of_the_input_is_never_flipped(child, torch):
    pinv = torch.ops.aten.linalg_pinv.atol_rtol_tensor
    unit = unit_request(torch, "linalg_pinv", "atol_rtol_tensor", "self")
    a = torch.linspace(-1, 1, 25, dtype=torch.float64).reshape(5, 5)
    made = _made(child, torch, pinv, unit, a, None, None, False)
    assert not any(v.startswith("hermitian") for v in made)


# --- at the edges (issue 52): ties, zero spreads, Scalar edges, dim lists, mixed complex and real, special indices


def _edges(child, torch, overload, unit, *args, **kwargs) -> dict:
    sample = {**_sample(torch, *args), **kwargs}
    return {m["variant"]: m for m in child.edge_variants(torch, overload, unit, [sample])}


def test_ties_are_kept_only_where_torch_s_own_gradient_agrees_with_finite_differences(child, torch):
    x = torch.arange(20, dtype=torch.float64).reshape(4, 5).sin()
    amax = _edges(child, torch, torch.ops.aten.amax.default, unit_request(torch, "amax", "default", "self"), x, [1])
    tied = amax["edge: ties in self (pairs along dim 1)"]["args"][0]
    assert torch.equal(tied[:, 1], tied[:, 0]) and torch.equal(tied[:, 3], tied[:, 2])  # (each max: two equal)
    assert not amax["edge: ties in self (pairs along dim 1)"]["points"]
    # max.dim gives the whole gradient to one of two equal elements, where central differences split it: dropped
    max_dim = _edges(child, torch, torch.ops.aten.max.dim, unit_request(torch, "max", "dim", "self"), x, 1)
    assert not any(v.startswith("edge: ties in self") for v in max_dim)
    # maximum's tie of its two inputs: torch splits the gradient, as central differences do
    maximum = torch.ops.aten.maximum.default
    made = _edges(child, torch, maximum, unit_request(torch, "maximum", "default", "self", "other"), x, x.cos())
    tied = made["edge: ties between self and other"]["args"]
    assert torch.equal(tied[0].reshape(-1)[::2], tied[1].reshape(-1)[::2])


def test_a_smooth_op_gets_no_ties_and_no_constant_inputs(child, torch):
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4).sin()
    made = _edges(child, torch, torch.ops.aten.sin.default, unit_request(torch, "sin", "default", "self"), x)
    assert not any("ties" in v or "constant" in v or "zero" in v for v in made)
    var = _edges(child, torch, torch.ops.aten.var.correction, unit_request(torch, "var", "correction", "self"), x)
    assert "edge: self constant" not in var  # (var is smooth at a zero spread: nothing to pick)


def test_a_zero_spread_is_kept_where_the_op_has_a_kink_there_and_torch_agrees(child, torch):
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4).sin()
    std = torch.ops.aten.std.correction
    made = _edges(child, torch, std, unit_request(torch, "std", "correction", "self"), x, [1])
    assert bool((made["edge: self constant"]["args"][0] == x[0, 0]).all())
    assert bool((made["edge: self constant along dim 1"]["args"][0].std(1) == 0).all())


def test_a_scalar_argument_gets_zero_negative_and_past_its_range_values_where_the_op_takes_them(child, torch):
    x = torch.linspace(-2, 2, 12, dtype=torch.float64)
    leaky = torch.ops.aten.leaky_relu.default
    made = _edges(child, torch, leaky, unit_request(torch, "leaky_relu", "default", "self"), x, 0.01)
    assert {"edge: negative_slope=0.0", "edge: negative_slope=-0.01", "edge: negative_slope=1.02"} <= set(made)
    # pow(0, exponent) is infinite for a negative exponent: the exponents are made positive for self = 0
    pow_scalar = torch.ops.aten.pow.Scalar
    made = _edges(child, torch, pow_scalar, unit_request(torch, "pow", "Scalar", "exponent"), 2.0, x, dtype=x.dtype)
    zero = made["edge: self=0.0, positive inputs"]["args"]
    assert zero[0] == 0.0 and bool((zero[1] > 0).all())


def test_a_dim_list_gets_empty_full_and_none_kept_where_torch_agrees(child, torch):
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4).sin()
    sum_dims = torch.ops.aten.sum.dim_IntList
    made = _edges(child, torch, sum_dims, unit_request(torch, "sum", "dim_IntList", "self"), x, [1])
    assert {"edge: dim=[], keepdim=False", "edge: dim=[0, 1], keepdim=True", "edge: dim=None, keepdim=False"} <= set(
        made
    )
    assert made["edge: dim=[-2, -1], keepdim=True"]["args"][1:3] == ([-2, -1], True)
    # torch 2.13's own gradient of std with dim=[] (every dim) disagrees with finite differences: never evidence
    std = _edges(child, torch, torch.ops.aten.std.correction, unit_request(torch, "std", "correction", "self"), x, [1])
    assert not any(v.startswith("edge: dim=[],") for v in std)


def test_one_operand_complex_and_the_other_real_both_orders(child, torch):
    z = torch.complex(torch.linspace(-1, 1, 6, dtype=torch.float64), torch.linspace(0.5, 2, 6, dtype=torch.float64))
    mul = torch.ops.aten.mul.Tensor
    made = _edges(child, torch, mul, unit_request(torch, "mul", "Tensor", "self", "other"), z, z.flip(0))
    real_self = made["edge: self real, the others complex"]["args"]
    assert not real_self[0].is_complex() and real_self[1].is_complex()
    real_other = made["edge: other real, the others complex"]["args"]
    assert real_other[0].is_complex() and not real_other[1].is_complex()


def test_indices_repeated_and_equal_to_padding_idx_where_torch_agrees(child, torch):
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4).sin()
    gather = torch.ops.aten.gather.default
    made = _edges(
        child,
        torch,
        gather,
        unit_request(torch, "gather", "default", "self"),
        x,
        1,
        torch.tensor([[0, 1], [1, 2], [2, 3]]),
    )
    assert made["edge: repeated indices in index"]["args"][2].tolist() == [[0, 0], [1, 1], [2, 2]]
    # embedding's double backward zeroes the padding row, as finite differences of its backward do
    dense = torch.ops.aten.embedding_dense_backward.default
    unit = unit_request(torch, "embedding_dense_backward", "default", "grad_output")
    grad_output = torch.arange(8, dtype=torch.float64).reshape(4, 2).cos()
    made = _edges(child, torch, dense, unit, grad_output, torch.tensor([3, 1, 3, 0]), 5, -1, False)
    assert made["edge: padding_idx=3 (an index indices holds)"]["args"][3] == 3
    # embedding's own padding_idx: its forward reads the padding row, its backward zeroes it: never evidence
    embedding = torch.ops.aten.embedding.default
    unit = unit_request(torch, "embedding", "default", "weight")
    made = _edges(child, torch, embedding, unit, torch.ones(5, 2, dtype=torch.float64), torch.tensor([3, 1, 3, 0]))
    assert not any("padding_idx" in v for v in made)


def test_edge_samples_are_the_same_at_every_run_and_skip_what_torch_does_not_agree_with(child, torch):
    x = torch.arange(20, dtype=torch.float64).reshape(4, 5).sin()
    unit = unit_request(torch, "amax", "default", "self")
    first = _edges(child, torch, torch.ops.aten.amax.default, unit, x, [1])
    second = _edges(child, torch, torch.ops.aten.amax.default, unit, x.clone(), [1])
    assert list(first) == list(second) and first
    assert all(torch.equal(a["args"][0], b["args"][0]) for a, b in zip(first.values(), second.values()))
    assert all("double-backward" in m["skip"] for m in first.values())  # (torch's own not compared: not checked)


def test_a_0_dim_sample_is_widened_for_its_edges(child, torch):
    amax = torch.ops.aten.amax.default
    made = _edges(
        child, torch, amax, unit_request(torch, "amax", "default", "self"), torch.tensor(0.5, dtype=torch.float64), [0]
    )
    assert "edge: ties in self (pairs along dim 0), every 0-dim input made (4, 4)" in made  # (ties in the reduced dim)
    assert "edge: ties in self (pairs along dim 1), every 0-dim input made (4, 4)" not in made  # (none there)
