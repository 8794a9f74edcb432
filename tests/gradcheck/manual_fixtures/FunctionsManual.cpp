// The FunctionsManual.cpp of derivls's synthetic checkout (tests/gradcheck/test_manual.py): the helpers of
// torch 2.13's torch/csrc/autograd/FunctionsManual.cpp that the tests edit, restated by derivls from PyTorch's
// source (pytorch/pytorch at 002ca6715ba1, the closest version read; its 2.13 helpers compute the same): the same
// names, signatures and computation, the shipped bugs included (docs/gradcheck.md lists them). The tests put in
// a fix, or a mistake, by replacing a line of this text.
#include <torch/csrc/autograd/FunctionsManual.h>
#include <ATen/TensorSubclassLikeUtils.h>
#include <ATen/native/LinearAlgebraUtils.h>

namespace torch::autograd::generated::details {

using at::areAnyTensorSubclassLike;
using at::Scalar;
using at::Tensor;

Tensor copysign_tensor_self_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  auto ratio = result / self;
  ratio.masked_fill_(self == 0, 0);
  return grad * ratio;
}

Tensor sgn_backward(const Tensor& x, const Tensor& gx, const Tensor& sgn) {
  if (x.is_complex()) {
    auto abs = x.abs();
    return ((gx - (sgn * sgn) * gx.conj()) / (2. * abs)).masked_fill_(abs == 0., 0.);
  } else {
    return at::_efficientzerotensor(sgn.sizes(), sgn.options());
  }
}

Tensor sinc_backward(const Tensor& grad, const Tensor& self) {
  auto self_pi = self * M_PI;
  auto self_squared_pi = self * self * M_PI;
  auto out = grad * ((self_pi * self_pi.cos() - self_pi.sin()) / self_squared_pi).conj();
  return at::where(self_squared_pi == 0.0, at::scalar_tensor(0.0, grad.options()), out);  // (sinc'(0) = 0)
}

Tensor handle_r_to_c(ScalarType self_st, Tensor gradient_result) {
  if (!at::isComplexType(self_st) && gradient_result.is_complex()) {
    return at::real(gradient_result);  // R -> C
  }
  return gradient_result;
}

static Tensor handle_r_to_c(const Tensor& self, Tensor gradient_result) {
  if (!self.is_complex() && gradient_result.is_complex()) {
    return at::real(gradient_result);  // R -> C
  }
  return gradient_result;
}

// d(a^b)/db at a = 0: 0 for b >= 0 (by continuity), -inf for b < 0 (from log(0))
Tensor pow_backward_exponent(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result) {
  Tensor cond;
  if (exponent.is_complex()) {
    auto is_real_exp = at::logical_and(at::imag(exponent) == 0, at::real(exponent) >= 0);
    cond = at::logical_and(self == 0, is_real_exp);
  } else {
    cond = at::logical_and(self == 0, exponent >= 0);
  }
  auto promoted_dtype = at::result_type(self, exponent);
  auto self_ = self.to(promoted_dtype);  // (a no-op when the dtype is already that)
  auto out = grad * at::where(cond, at::scalar_tensor(0.0, grad.options()), (result * self_.log()).conj());
  return handle_r_to_c(exponent, std::move(out));
}

Tensor pow_backward_exponent(const Tensor& grad, const Scalar& base, const Tensor& exponent, const Tensor& result) {
  auto grad_lambda = [](const Tensor& a, const Scalar& b) { return (a * b.log()).conj(); };
  auto base_ = exponent.is_complex() && !base.isComplex() ? base.toComplexDouble() : base;
  if (base.equal(0.0)) {
    auto cond = [](const auto& exp) {
      if (exp.is_complex()) {
        return at::logical_and(at::imag(exp) == 0, at::real(exp) >= 0);
      } else {
        return exp >= 0;
      }
    };
    auto out = grad * at::where(cond(exponent), at::zeros({}, grad.options()), grad_lambda(result, base_));
    return handle_r_to_c(exponent, std::move(out));
  } else {
    auto out = grad * grad_lambda(result, base_);
    return handle_r_to_c(exponent, std::move(out));
  }
}

Tensor logcumsumexp_jvp(const Tensor& self_p, const Tensor& self_t, int64_t dim) {
  // the exp-normalize trick: exp(self - max(self, dim)) (complex: at::max has no complex kernel)
  auto self_p_exp = [&self_p, dim]() {
    if (!at::is_complex(self_p)) {
      return (self_p - std::get<0>(at::max(self_p, dim, true))).exp();
    } else {
      return self_p.exp();
    }
  }();
  auto cumsumexp_p = self_p_exp.cumsum(dim);
  TORCH_INTERNAL_ASSERT(!self_t._is_zerotensor())
  constexpr double eps = 1e-13;
  if (areAnyTensorSubclassLike({self_p, self_t})) {
    auto result = (self_p_exp * self_t).cumsum(dim);
    result /= cumsumexp_p.add_(eps);
    return result;
  } else {
    self_p_exp *= self_t;
    auto cumsumexp_t = self_p_exp.cumsum(dim);
    return cumsumexp_t /= cumsumexp_p.add_(eps);
  }
}

Tensor mse_loss_double_backward(const Tensor& grad, const Tensor& input, int64_t reduction) {
  auto grad_input = 2 * grad;
  if (reduction == at::Reduction::Mean) {
    grad_input /= input.sym_numel();
  }
  return grad_input;
}

Tensor linalg_det_jvp(const Tensor& dA, const Tensor& det, const Tensor& LU, const Tensor& pivots, const bool use_A_T) {
  // (d det)_A(E) = tr(A^{-1} E) det; a singular A is approximated by putting eps on the zeros of U's diagonal
  auto eps = at::native::_get_epsilon(c10::toRealValueType(LU.scalar_type()));
  auto LU_ = LU + at::diag_embed(at::where(LU.diagonal(0, -2, -1) == 0., eps, 0.));
  auto AinvE = at::linalg_lu_solve(LU_, pivots, dA, /*left=*/true, /*adjoint=*/use_A_T);
  return AinvE.diagonal(0, -2, -1).sum(-1) * det;
}

} // namespace torch::autograd::generated::details
