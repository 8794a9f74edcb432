"""Issue 51: the formulas call the checkout's FunctionsManual.cpp helpers where they are edited.

A synthetic checkout (a git repository: tools/autograd/derivatives.yaml and its templates from the 2.13 wheel,
aten/src/ATen/native/native_functions.yaml and tags.yaml, the wheel's FunctionsManual.h, and a FunctionsManual.cpp
holding the helpers under test: manual_fixtures/FunctionsManual.cpp). Three runs, one build each:

- **shipped**: the file as committed, no base (the repository does not hold torch's commit): every helper the
  entries call is compiled from the file, and the 2.13 bugs of those helpers fail as torch's own do;
- **edited** (`--since HEAD`): the bugs fixed in the helpers and a mistake seeded in one (a dropped sign in
  copysign_tensor_self_backward, which two entries call): `--since` picks the entries calling the edited helpers,
  the fixed ones pass, the mistake is flagged on each calling entry and on the helper's line;
- **broken** (`--since HEAD`): a helper that no longer compiles (its error on its line of FunctionsManual.cpp)
  and a helper whose signature changed (its caller gets the compiler's error on the formula).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from derivls.gradcheck.manual import parse_manual
from tests.gradcheck.conftest import Run, gradcheck

pytestmark = pytest.mark.gradcheck

FIXTURE = Path(__file__).parent / "manual_fixtures" / "FunctionsManual.cpp"
MANUAL = Path("torch/csrc/autograd/FunctionsManual.cpp")

# the torch 2.13 bugs derivls found in helpers (docs/gradcheck.md), each helper fixed: entry -> (helper, fixed text)
FIXES = {
    "mse_loss_backward": (
        "mse_loss_double_backward",
        """Tensor mse_loss_double_backward(const Tensor& grad, const Tensor& input, int64_t reduction) {
  auto grad_input = 2 * grad;
  if (reduction == at::Reduction::Mean) {
    grad_input = grad_input / input.sym_numel();  // (out of place: grad may be a ZeroTensor, which is immutable)
  }
  return grad_input;
}""",
    ),
    "logcumsumexp": (
        "logcumsumexp_jvp",
        """Tensor logcumsumexp_jvp(const Tensor& self_p, const Tensor& self_t, int64_t dim) {
  // d logcumsumexp(x)_i = sum_{j <= i} exp(x_j - y_i) t_j, its positive and negative parts summed in log space
  // (exp(x - max(x, dim)) underflows for a prefix far below the dimension's maximum)
  if (at::is_complex(self_p)) {
    auto self_p_exp = self_p.exp();
    return (self_p_exp * self_t).cumsum(dim) / self_p_exp.cumsum(dim).add_(1e-13);
  }
  auto result = at::logcumsumexp(self_p, dim);
  auto lowest = at::scalar_tensor(-std::numeric_limits<double>::infinity(), self_p.options());
  auto log_abs_t = self_t.abs().log();
  auto positive = at::logcumsumexp(self_p + at::where(self_t > 0, log_abs_t, lowest), dim);
  auto negative = at::logcumsumexp(self_p + at::where(self_t < 0, log_abs_t, lowest), dim);
  return (positive - result).exp() - (negative - result).exp();
}""",
    ),
    "pow.Tensor_Tensor": (
        "pow_backward_exponent",
        """Tensor pow_backward_exponent(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result) {
  Tensor cond;
  if (exponent.is_complex()) {  // pow(0, b) is 0 around every b with a positive real part: its derivative is 0
    auto zero_around = at::logical_or(
        at::real(exponent) > 0, at::logical_and(at::imag(exponent) == 0, at::real(exponent) >= 0));
    cond = at::logical_and(self == 0, zero_around);
  } else {
    cond = at::logical_and(self == 0, exponent >= 0);
  }
  auto promoted_dtype = at::result_type(self, exponent);
  auto self_ = self.to(promoted_dtype);
  auto out = grad * at::where(cond, at::scalar_tensor(0.0, grad.options()), (result * self_.log()).conj());
  return handle_r_to_c(exponent, std::move(out));
}""",
    ),
    "_linalg_det": (
        "linalg_det_jvp",
        """Tensor linalg_det_jvp(const Tensor& dA, const Tensor& det, const Tensor& LU, const Tensor& pivots, const bool use_A_T) {
  // (d det)_A(E) = tr(adj(A) E) = tr(A^{-1} E) det(A), both factors taken with eps on the zeros of U's diagonal
  // (at a singular A, det(A) is 0: the product with the exact det would be 0, where tr(adj(A) E) need not be)
  auto eps = at::native::_get_epsilon(c10::toRealValueType(LU.scalar_type()));
  auto singular = LU.diagonal(0, -2, -1) == 0.;
  auto LU_ = LU + at::diag_embed(at::where(singular, eps, 0.));
  auto AinvE = at::linalg_lu_solve(LU_, pivots, dA, /*left=*/true, /*adjoint=*/use_A_T);
  auto n = LU.size(-1);
  auto swaps = (pivots != at::arange(1, n + 1, pivots.options())).sum(-1);
  auto det_ = at::where(singular.any(-1), LU_.diagonal(0, -2, -1).prod(-1) * (1 - 2 * (swaps % 2)), det);
  return AinvE.diagonal(0, -2, -1).sum(-1) * det_;
}""",
    ),
}
BUG_UNITS = {
    "mse_loss_backward": "MseLossBackwardBackward0",
    "logcumsumexp": "LogcumsumexpBackward0",
    "pow.Tensor_Tensor": "PowBackward1",
    "_linalg_det": "LinalgDetBackward0",
}
# mistakes seeded in helpers: helper -> (the shipped line, the mistaken one, the units whose formulas call it)
SEEDED = {
    # a dropped sign, in a helper two entries call (copysign.Tensor and copysign.Scalar)
    "copysign_tensor_self_backward": (
        "  return grad * ratio;",
        "  return -grad * ratio;",
        {"CopysignBackward0", "CopysignBackward1"},
    ),
    # a dropped .conj(), in a helper of sgn's backward and forward formulas (wrong for complex inputs only)
    "sgn_backward": (
        "    return ((gx - (sgn * sgn) * gx.conj()) / (2. * abs)).masked_fill_(abs == 0., 0.);",
        "    return ((gx - (sgn * sgn) * gx) / (2. * abs)).masked_fill_(abs == 0., 0.);",
        {"SgnBackward0"},
    ),
    # a wrong special value: sinc'(0) given as 1 (right everywhere else)
    "sinc_backward": (
        "at::scalar_tensor(0.0, grad.options()), out);",
        "at::scalar_tensor(1.0, grad.options()), out);",
        {"SincBackward0"},
    ),
}
SEEDED_UNITS = {unit for *_, units in SEEDED.values() for unit in units}


def with_helper(text: str, name: str, definition: str) -> str:
    """`text` with the (only) definition of `name` replaced by `definition`."""
    lines = text.split("\n")
    (helper,) = [h for h in parse_manual(text).helpers if h.name == name and "Scalar& base" not in h.signature]
    return "\n".join([*lines[: helper.start_line], definition, *lines[helper.end_line + 1 :]])


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=folder,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def checkout(real_files, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("checkout")
    autograd = root / "tools" / "autograd"
    autograd.mkdir(parents=True)
    shutil.copyfile(real_files.derivatives, autograd / "derivatives.yaml")
    shutil.copytree(real_files.derivatives.parent / "templates", autograd / "templates")
    native = root / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    shutil.copyfile(real_files.native, native / "native_functions.yaml")
    shutil.copyfile(real_files.tags, native / "tags.yaml")
    include = real_files.packaged.parent.parent / "torch" / "include"
    (root / MANUAL).parent.mkdir(parents=True)
    shutil.copyfile(include / "torch" / "csrc" / "autograd" / "FunctionsManual.h", root / MANUAL.with_suffix(".h"))
    shutil.copyfile(FIXTURE, root / MANUAL)
    (root / "version.txt").write_text("2.13.0\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "2.13's helpers")
    return root


def _run(checkout: Path, name: str, text: str, *args: str) -> Run:
    (checkout / MANUAL).write_text(text)
    folder = checkout.parent / f"run-{name}"  # (its own summary file: none of another run's is read)
    folder.mkdir()
    return gradcheck(checkout / "tools" / "autograd" / "derivatives.yaml", *args, "--no-repair", cwd=folder)


@pytest.fixture(scope="module")
def runs(checkout) -> dict:
    shipped = FIXTURE.read_text()
    edited = shipped
    for name, definition in FIXES.values():
        edited = with_helper(edited, name, definition)
    # (the Scalar base's overload has the same condition: fixed alike)
    scalar_base = "return at::logical_and(at::imag(exp) == 0, at::real(exp) >= 0);"
    assert scalar_base in edited
    edited = edited.replace(
        scalar_base,
        "return at::logical_or(at::real(exp) > 0, at::logical_and(at::imag(exp) == 0, at::real(exp) >= 0));",
    )
    for shipped_line, mistaken, _ in SEEDED.values():
        assert edited.count(shipped_line) == 1
        edited = edited.replace(shipped_line, mistaken)
    broken = edited.replace(SEEDED["copysign_tensor_self_backward"][1], "  return grad * ratio_not_declared;")
    broken = broken.replace(
        "Tensor mse_loss_double_backward(const Tensor& grad, const Tensor& input, int64_t reduction) {",
        "Tensor mse_loss_double_backward(const Tensor& grad, const Tensor& input, int64_t reduction, double scale) {",
    )
    ops = [a for op in [*BUG_UNITS, "copysign.Tensor"] for a in ("--op", op)]
    return {
        "shipped": _run(checkout, "shipped", shipped, *ops),
        "edited": _run(checkout, "edited", edited, "--since", "HEAD"),
        "broken": _run(
            checkout,
            "broken",
            broken,
            "--since",
            "HEAD",
            "--op",
            "copysign.Tensor",
            "--op",
            "mse_loss_backward",
            "--op",
            "logcumsumexp",
        ),
        "texts": {"shipped": shipped, "edited": edited, "broken": broken},
    }


def _units(run: Run) -> dict[str, dict]:
    return {u["name"]: u for u in run.summary["units"]}


def _line(text: str, needle: str) -> int:
    """1-based line of the first line of `text` holding `needle`."""
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


def _on_manual(run: Run) -> list[dict]:
    return [d for d in run.diagnostics if d["path"].endswith(str(MANUAL))]


def test_the_shipped_helpers_compiled_from_the_checkout_fail_as_torchs_do(runs):
    run = runs["shipped"]
    units = _units(run)
    assert run.code == 1, run.stderr
    assert {name: units[name]["status"] for name in BUG_UNITS.values()} == dict.fromkeys(BUG_UNITS.values(), "failed")
    assert units["CopysignBackward0"]["status"] == "passed"
    manual = run.summary["manual"]
    assert manual["base"].startswith("no base") and set(manual["compiled"]) >= {h for h, _ in FIXES.values()}
    # each failure is also on the helper the formula calls, in FunctionsManual.cpp
    text = runs["texts"]["shipped"]
    helper_lines = {d["line"] for d in _on_manual(run)}
    for name, _ in FIXES.values():
        assert _line(text, f" {name}(") in helper_lines, name


def test_the_fixed_helpers_pass_and_since_picks_the_entries_calling_them(runs):
    run = runs["edited"]
    units = _units(run)
    # --since HEAD: no entry of derivatives.yaml changed; every entry calling an edited helper is picked
    assert set(BUG_UNITS.values()) | SEEDED_UNITS <= set(units), sorted(units)
    assert "AcosBackward0" not in units
    assert {name: units[name]["status"] for name in BUG_UNITS.values()} == dict.fromkeys(BUG_UNITS.values(), "passed")
    manual = run.summary["manual"]
    assert manual["base"] == "--since HEAD"
    assert set(manual["edited"]) == {h for h, _ in FIXES.values()} | set(SEEDED)
    # the edited helpers and the file-local one they call (handle_r_to_c has a static overload), nothing else
    assert set(manual["compiled"]) == set(manual["edited"]) | {"handle_r_to_c"}


def test_a_mistake_in_a_helper_is_flagged_on_each_calling_entry_and_on_the_helpers_line(runs):
    run = runs["edited"]
    units = _units(run)
    assert run.code == 1
    assert {name: units[name]["status"] for name in SEEDED_UNITS} == dict.fromkeys(SEEDED_UNITS, "failed")
    yaml = [d for d in run.diagnostics if d["path"].endswith("derivatives.yaml")]
    assert {d["message"].split(":")[0] for d in yaml} == SEEDED_UNITS  # (nothing else is flagged)
    text = runs["texts"]["edited"]
    on_helpers = _on_manual(run)
    for helper, (*_, callers) in SEEDED.items():
        line = _line(text, f" {helper}(")
        here = [d for d in on_helpers if d["line"] == line]
        assert {u for d in here for u in callers if d["message"].startswith(f"{helper}: {u},")} == callers, here
    assert {d["line"] for d in on_helpers} == {_line(text, f" {helper}(") for helper in SEEDED}


def test_a_helper_that_does_not_compile_is_an_error_on_its_line_and_a_changed_signature_on_its_caller(runs, checkout):
    run = runs["broken"]
    units = _units(run)
    text = runs["texts"]["broken"]
    assert run.code == 1
    (error,) = [d for d in _on_manual(run) if d["code"] == "compile-error"]
    assert error["line"] == _line(text, "ratio_not_declared")
    assert "ratio_not_declared" in error["message"]
    assert units["CopysignBackward0"]["status"] == "not-checkable"
    assert "copysign_tensor_self_backward does not compile" in units["CopysignBackward0"]["reason"]
    # the signature changed: mse_loss_backward's formulas get the compiler's error, on their lines
    derivatives = (checkout / "tools" / "autograd" / "derivatives.yaml").read_text()
    formula = _line(derivatives, "mse_loss_double_backward(grad * grad_output, self, reduction)")
    on_formulas = [
        d for d in run.diagnostics if d["path"].endswith("derivatives.yaml") and d["code"] == "compile-error"
    ]
    assert formula in {d["line"] for d in on_formulas}, on_formulas
    assert units["MseLossBackwardBackward0"]["status"] == "not-checkable"
    # the rest is built and checked
    assert units["LogcumsumexpBackward0"]["status"] == "passed"
