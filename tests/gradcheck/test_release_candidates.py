"""The releases check each other (issue 52): every formula a later release changed is a candidate fix
(tests/releases/candidates.py lists them). The earlier release's formula is gradchecked with torch 2.13: a change
that fixed it must fail there, one that did not (a refactor) must pass; the later formula, grafted into the earlier
file, tells a fix (it passes) from a change that broke something (2.14's fmax: it fails). docs/gradcheck.md ("Releases check each
other") gives the table, with the 2.14.1 torch's runs and the torch-only scripts.

The candidate lists need 2.14.1's and 2.15.0's packaged files (fetched as the release matrix fetches them): those
tests are `releases`. The gradchecks need only the installed torch 2.13: the entries they check are pinned here, and
the `releases` tests check the pins against the files."""

from __future__ import annotations

import pytest

from tests.gradcheck.conftest import gradcheck, line_of, make_wheel_copy

# 2.13.0 -> 2.14.1: (kind, the keys whose formulas changed, the keys added, the keys removed)
CANDIDATES_2_14 = {
    "clamp_min": ("changed", ("self",), (), ()),
    "clamp_min.Tensor": ("changed", ("self", "min", "result"), (), ()),
    "clamp_max": ("changed", ("self",), (), ()),
    "clamp_max.Tensor": ("changed", ("self", "max", "result"), (), ()),
    "erf": ("changed", ("self",), (), ()),
    "erfc": ("changed", ("self",), (), ()),
    "special_erfcx": ("changed", ("self",), (), ()),
    "erfinv": ("changed", ("self",), (), ()),
    "ldexp.Tensor": ("changed", ("self", "result"), (), ()),
    "log10": ("changed", ("self",), (), ()),
    "log2": ("changed", ("self",), (), ()),
    "linalg_matrix_sqrth": ("new", (), ("self", "result"), ()),
    "linalg_polar": ("new", (), ("A", "U, H"), ()),
    "maximum": ("changed", ("self", "other", "result"), (), ()),
    "fmax": ("changed", ("self", "other", "result"), (), ()),
    "minimum": ("changed", ("self", "other", "result"), (), ()),
    "fmin": ("changed", ("self", "other", "result"), (), ()),
    "native_group_norm": ("changed", ("input, weight, bias",), (), ()),
    "_pdist_backward": ("changed", (), ("grad_output, self, pdist",), ("grad", "self", "pdist")),
    "_cdist_backward": ("changed", (), ("grad_output, x1, x2, cdist",), ("grad", "x1", "x2", "cdist")),
    "special_ndtri": ("changed", ("self",), (), ()),
    "special_log_ndtr": ("changed", ("self",), (), ()),
    "cholesky": ("removed", (), (), ("self",)),
}

# 2.14.1 -> 2.15.0
BESSEL = ("j0", "j1", "y0", "y1")
MODIFIED_BESSEL = ("i0", "i1", "k0", "k1")
CANDIDATES_2_15 = {
    "_linalg_det": ("changed", ("result",), (), ()),
    "_linalg_slogdet": ("changed", ("sign, logabsdet",), (), ()),
    "grid_sampler_2d": ("changed", (), ("result",), ()),
    "grid_sampler_3d": ("changed", (), ("result",), ()),
    "_grid_sampler_2d_cpu_fallback": ("changed", (), ("result",), ()),
    "fmax": ("changed", ("self", "other", "result"), (), ()),
    "fmin": ("changed", ("self", "other", "result"), (), ()),
    "_linalg_solve_ex": ("changed", ("result",), (), ()),
    "cudnn_grid_sampler": ("changed", (), ("output",), ()),
    "_efficient_attention_forward": ("changed", ("query, key, value, bias",), (), ()),
    **{f"special_bessel_{k}": ("changed", ("self",), ("result",), ()) for k in BESSEL},
    **{f"special_modified_bessel_{k}": ("changed", ("self",), ("result",), ()) for k in MODIFIED_BESSEL},
}

# the 2.14 formulas 2.15 changed that are 2.13's own too (all but fmax's and fmin's, which 2.14 had changed): their
# gradcheck with torch 2.13 judges the 2.14 text. CPU kernels only (cudnn_grid_sampler, _efficient_attention_forward:
# none), and an entry with a formula (the Bessel functions' were non_differentiable).
SHARED_2_15 = (
    "_linalg_det",
    "_linalg_slogdet",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "_grid_sampler_2d_cpu_fallback",
    "_linalg_solve_ex",
)

# each checked entry's verdict on torch 2.13, as the shipped 2.13 file has it
VERDICTS = {
    # 2.13 -> 2.14: ldexp's fix is caught (an integer `other`: 2.13 computes 2**-1 in integers, 0). The ties of
    # clamp_min.Tensor / clamp_max.Tensor / fmax / fmin (2.13 gives the whole gradient to one side where central
    # differences give half to each) are fixes no sample reaches; maximum's / minimum's forward fix is for infinite
    # tangents, which gradcheck never makes; the rest are refactors or new formulas.
    **{name: ("passed", "") for name in CANDIDATES_2_14 if name not in ("linalg_matrix_sqrth", "linalg_polar")},
    "ldexp.Tensor": ("failed", ""),
    "_pdist_backward": ("not-checkable", "not implemented"),
    "_cdist_backward": ("not-checkable", "not implemented"),
    # 2.14 -> 2.15: the singular-matrix fix of det's forward formula (2.15 passes A_p to linalg_det_jvp) is caught
    "_linalg_det": ("failed", ""),
    "_linalg_slogdet": ("passed", ""),
    "grid_sampler_2d": ("passed", ""),
    # (OpInfo skips its test_fn_grad, for MPS only: run since issue 52's round 3, where torch's own gradient agrees)
    "grid_sampler_3d": ("passed", ""),
    # (a new forward formula in 2.15, not a fix: checked since the float32 retries of issue 52's coverage, and passes)
    "_grid_sampler_2d_cpu_fallback": ("passed", ""),
    "_linalg_solve_ex": ("passed", ""),
}

# the fixes found, each on the lines the later release changed: (node, the entry, the earlier formula there)
FIXES = {
    ("LdexpBackward0", "ldexp.Tensor", "self: grad * at::pow(2, other).conj()"),
    ("LdexpBackward0", "ldexp.Tensor", "result: self_t * at::pow(2, other_p) + other_t * result * M_LN2"),
    (
        "LinalgDetBackward0",
        "_linalg_det",
        "result: linalg_det_jvp(A_t, result, LU, pivots, A_p.is_contiguous() && !A_p.is_complex())",
    ),
}


@pytest.mark.releases
def test_the_candidates_between_2_13_2_14_and_2_15_are_the_pinned_ones():
    from tests.releases.candidates import release_candidates

    for (earlier, later), pinned in (
        (("2.13.0", "2.14.1"), CANDIDATES_2_14),
        (("2.14.1", "2.15.0"), CANDIDATES_2_15),
    ):
        found = {
            c.name: (c.kind, c.changed_keys, c.added_keys, c.removed_keys) for c in release_candidates(earlier, later)
        }
        assert found == pinned, (earlier, later)


@pytest.mark.releases
def test_the_2_14_formulas_2_15_changed_are_2_13s_own_but_fmax_and_fmin():
    from tests.releases.candidates import read_entries, release_candidates, release_derivatives

    shipped = read_entries(release_derivatives("2.13.0").read_text(encoding="utf-8"))
    own = {c.name for c in release_candidates("2.14.1", "2.15.0") if shipped[c.name].formulas == c.earlier.formulas}
    assert own == set(CANDIDATES_2_15) - {"fmax", "fmin"}
    assert set(SHARED_2_15) <= own


@pytest.fixture(scope="module")
def candidates_run(real_files, tmp_path_factory):
    """`derivls gradcheck` of every candidate the 2.13 file has (2.14's changes, and 2.15's to 2.13's own formulas)
    with torch 2.13, on a copy of the shipped file."""
    folder = tmp_path_factory.mktemp("candidates")
    path = make_wheel_copy(real_files, folder / "site-packages")
    run = gradcheck(path, *[a for op in VERDICTS for a in ("--op", op)], "--no-repair", cwd=folder)
    return path, run


@pytest.mark.gradcheck
def test_each_candidate_has_its_pinned_verdict_with_torch_2_13(candidates_run):
    _, run = candidates_run
    found = {u["function"]: (u["status"], u["reason"].split(":")[0]) for u in run.summary["units"]}
    reasons = {
        u["function"]: u["reason"] for u in run.summary["units"] if found[u["function"]] != VERDICTS.get(u["function"])
    }
    assert found == VERDICTS, (reasons, run.stderr[-3000:])


@pytest.mark.gradcheck
def test_each_fix_found_fails_on_the_lines_the_later_release_changed_and_nowhere_else(candidates_run):
    path, run = candidates_run
    found = {(d["message"].split(":")[0], d["line"]) for d in run.diagnostics}
    assert found == {(node, line_of(path, text, "- name: " + entry)) for node, entry, text in FIXES}, run.stderr
    assert run.code == 1


@pytest.mark.gradcheck
def test_the_2_14_formulas_grafted_into_the_2_13_file_pass_with_torch_2_13(real_files, tmp_path):
    """2.14's text of each changed entry whose helpers torch 2.13 has (masked_fill_inplace_if_safe backported as
    masked_fill): ldexp's fix passes where 2.13's failed; fmax's and fmin's fail for a NaN (2.14's regression, fixed
    in 2.15); the refactors pass, as 2.13's text does."""
    from tests.releases.candidates import graft, release_derivatives

    grafted_names = [
        name
        for name, (kind, *_) in CANDIDATES_2_14.items()
        if kind == "changed" and name not in ("native_group_norm", "_pdist_backward", "_cdist_backward")
    ]  # (those call helpers 2.14 added: native_group_norm_backward_dispatcher, _pdist/_cdist_backward_backward)
    path = make_wheel_copy(real_files, tmp_path / "site-packages")
    later = release_derivatives("2.14.1").read_text(encoding="utf-8")
    path.write_text(graft(path.read_text(encoding="utf-8"), later, grafted_names), encoding="utf-8")
    run = gradcheck(path, *[a for op in grafted_names for a in ("--op", op)], "--no-repair", cwd=tmp_path)
    expected = {**dict.fromkeys(grafted_names, "passed"), "fmax": "failed", "fmin": "failed"}
    assert {u["function"]: u["status"] for u in run.summary["units"]} == expected, run.stderr
    assert {d["message"].split(":")[0] for d in run.diagnostics} == {"FmaxBackward0", "FminBackward0"}
    assert all("a NaN in" in d["message"] for d in run.diagnostics)
