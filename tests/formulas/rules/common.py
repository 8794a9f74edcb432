"""What the rule tests share: real schemas, and the findings of a formula as (code, text, first suggestion)."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve

ABS = "abs(Tensor self) -> Tensor"


MAX_DIM = "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"


DROPOUT = "_fused_dropout(Tensor self, float p, Generator? generator=None) -> (Tensor, Tensor)"


LAYER_NORM = (
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
    "-> (Tensor, Tensor, Tensor)"
)


def codes(formula, scope, headers):
    return [(f.code, formula[f.start : f.end], f.suggestions[:1]) for f in resolve(formula, scope, headers)]


def where(formula, scope, headers):
    """(code, the text it points at) of each finding."""
    return [(code, text) for code, text, _ in codes(formula, scope, headers)]


CAT = "cat(Tensor[] tensors, int dim=0) -> Tensor"


AS_STRIDED = "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)"


LERP = "lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor"


NAN_TO_NUM = "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor"


MATMUL = "matmul(Tensor self, Tensor other) -> Tensor"


EIGH = '_linalg_eigh(Tensor A, str UPLO="L", bool compute_v=True) -> (Tensor eigenvalues, Tensor eigenvectors)'


def rewrites(formula, scope, headers):
    return [(f.code, formula[f.start : f.end], [r.text for r in f.rewrites]) for f in resolve(formula, scope, headers)]
