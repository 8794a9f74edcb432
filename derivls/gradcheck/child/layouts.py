"""Inputs made by hand for the ops whose arguments need a layout or a structure a schema cannot say (layout_samples):
the nested constructors (a nested-size tensor of int64, a bool mask, a flat buffer with sizes, strides and offsets
that fit it, a list of tensors) and the ops taking a sparse argument beside a strided one (sparse_mask,
sparse_sampled_addmm, _sparse_mm_reduce_impl), whose sparse arguments are held constant while the strided ones vary.
Their outputs are seen through the flat view of nested.py (a nested or sparse output as its values); the formula gets
its grad in the layout the op's real backward gets (as_grad)."""

import warnings

from .nested import from_flat, structure

HELD = "its sparse arguments held constant"  # (said in the check's text: only the strided inputs vary)


def _nested_sizes(torch):
    """Two components of a 2-d nested tensor, ragged in their first dim."""
    return torch.tensor([[3, 2], [2, 2]], dtype=torch.int64)


def _from_tensor_list(torch, g):
    return "two ragged components", [
        [torch.rand(3, 2, dtype=torch.float64, generator=g), torch.rand(2, 2, dtype=torch.float64, generator=g)]
    ]


def _from_mask(torch, g):
    mask = torch.tensor([[True, True, True], [True, True, False]])  # (rows of 3 and 2 of a padded [2, 3, 2])
    return "a padded [2, 3, 2] and a bool mask of rows 3 and 2", [
        torch.rand(2, 3, 2, dtype=torch.float64, generator=g),
        mask,
        True,
    ]


def _from_padded(torch, g):
    return "a padded [2, 3, 2] and the int64 sizes [3, 2], [2, 2]", [
        torch.rand(2, 3, 2, dtype=torch.float64, generator=g),
        _nested_sizes(torch),
        False,
    ]


def _view_from_buffer(torch, g):
    strides = torch.tensor([[2, 1], [2, 1]], dtype=torch.int64)
    offsets = torch.tensor([0, 6], dtype=torch.int64)
    return "a flat buffer of 10 with sizes [3, 2], [2, 2], contiguous strides, offsets 0, 6", [
        torch.rand(10, dtype=torch.float64, generator=g),
        _nested_sizes(torch),
        strides,
        offsets,
    ]


def _pattern(torch, g, rows, cols):
    """A fixed sparsity pattern: about half of a rows x cols matrix, each row and column with an element."""
    dense = (torch.rand(rows, cols, generator=g) > 0.5).to(torch.float64)
    dense[torch.arange(rows), torch.arange(rows) % cols] = 1.0
    return dense * (torch.rand(rows, cols, dtype=torch.float64, generator=g) + 0.5)


def _sparse_mask(torch, g):
    mask = _pattern(torch, g, 3, 4).to_sparse()
    return "a dense [3, 4] and a sparse COO mask, " + HELD, [torch.rand(3, 4, dtype=torch.float64, generator=g), mask]


def _sampled_addmm(torch, g):
    self = _pattern(torch, g, 3, 3).to_sparse_csr()
    mat1 = torch.rand(3, 2, dtype=torch.float64, generator=g)
    mat2 = torch.rand(2, 3, dtype=torch.float64, generator=g)
    return "a sparse CSR [3, 3], dense [3, 2] and [2, 3], " + HELD, [self, mat1, mat2, 0.5, 1.5]


def _mm_reduce(reduce):
    def make(torch, g):
        self = _pattern(torch, g, 3, 4).to_sparse_csr()
        return f"a sparse CSR [3, 4] and a dense [4, 2], reduce {reduce}, " + HELD, [
            self,
            torch.rand(4, 2, dtype=torch.float64, generator=g),
            reduce,
        ]

    return make


MADE = {
    ("_nested_tensor_from_tensor_list", "default"): [_from_tensor_list],
    ("_nested_tensor_from_mask", "default"): [_from_mask],
    ("_nested_from_padded", "default"): [_from_padded],
    ("_nested_view_from_buffer", "default"): [_view_from_buffer],
    ("_nested_view_from_buffer_copy", "default"): [_view_from_buffer],
    ("sparse_mask", "default"): [_sparse_mask],
    ("sparse_sampled_addmm", "default"): [_sampled_addmm],
    ("_sparse_mm_reduce_impl", "default"): [_mm_reduce("sum"), _mm_reduce("mean")],
}


def layout_samples(torch, unit, overload):
    """The samples made by hand for the unit's overload (MADE), [] when it has none: float64, positional, with a
    `layouts` mark (run_check sees its outputs flat and hands the formula grads of the outputs' layouts; only its
    strided tensors vary)."""
    out = []
    g = torch.Generator().manual_seed(0)
    nested = unit.get("layout") == "nested"  # (an AutogradNestedTensor formula's unit)
    key = (unit["aten"], unit["overload"])
    for make in (NESTED_MADE if nested else MADE).get(key, ()):
        with warnings.catch_warnings():  # (torch's warning that sparse CSR support is in beta is not the user's)
            warnings.simplefilter("ignore", UserWarning)
            what, values = make(torch, g)
        out.append(
            {
                "dtype": torch.float64,
                "args": tuple(values),
                "kwargs": {},
                "origin": f"made for its layout ({what})",
                "skip": {},
                "transforms": {},
                "nested": True,  # (run_check: the outputs as the op gave them, their grads in their layouts)
                "layouts": True,
                "built": [0] if nested or key in BUILT_MADE else [],  # (self: made of its values)
            }
        )
    return out


def strided(torch, value):
    """A value a dense gradcheck can vary: a strided tensor, not nested."""
    return isinstance(value, torch.Tensor) and value.layout == torch.strided and not value.is_nested


def as_grad(torch, flat, output):
    """The grad of `output` the op's real backward gets, from gradcheck's flat grad: a nested tensor of the output's
    components (nested.from_flat); for a sparse output, the dense grad masked by the output's pattern, in its layout
    (what to_dense's backward hands it: `grad.sparse_mask(self)`); the flat grad as it is for a strided output."""
    if flat is None or not isinstance(output, torch.Tensor):
        return flat
    if output.is_nested and output.layout == torch.jagged:  # (of its offsets: the same ragged dim)
        return torch.nested.nested_tensor_from_jagged(flat.reshape(output.values().shape), offsets=output.offsets())
    if output.is_nested:
        return from_flat(torch, flat, structure(torch, output))
    if output.layout in (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc):
        return flat.reshape(output.shape).sparse_mask(
            output.coalesce() if output.layout == torch.sparse_coo else output
        )
    return flat


def _coo(torch, g):
    """A sparse COO [3, 4] of 5 values at fixed, coalesced indices."""
    indices = torch.tensor([[0, 0, 1, 2, 2], [1, 3, 0, 0, 2]], dtype=torch.int64)
    values = torch.rand(5, dtype=torch.float64, generator=g) + 0.5
    return torch.sparse_coo_tensor(indices, values, (3, 4), is_coalesced=True)


def _values_of(kind):
    def make(torch, g):
        self = _coo(torch, g) if kind == "COO" else _coo(torch, g).to_sparse_csr()
        return f"a sparse {kind} [3, 4] of 5 values, {VARIED}", [self]

    return make


def _sparse_sum(dims):
    def make(torch, g):
        return f"a sparse COO [3, 4] of 5 values, dim {dims}, {VARIED}", [_coo(torch, g), dims]

    return make


def _compressed(torch, g):
    csr = _coo(torch, g).to_sparse_csr()
    return "the indices and 5 values of a sparse CSR [3, 4]", [
        csr.crow_indices(),
        csr.col_indices(),
        csr.values().clone(),
        [3, 4],
        torch.float64,  # (None: the default dtype, float32, which float64 values do not match)
        torch.sparse_csr,
        None,
        None,
    ]


VARIED = "its values varied at fixed indices"  # (a sparse argument made of the varied values: BUILT)
# the ops whose differentiable argument is sparse: a check varies its values (the argument index: BUILT)
BUILT_MADE = {
    ("values", "default"): [_values_of("COO"), _values_of("CSR")],
    ("values_copy", "default"): [_values_of("CSR")],  # (values_copy has no sparse COO kernel)
    ("_sparse_sum", "dim"): [_sparse_sum([1]), _sparse_sum([0, 1])],
}
MADE.update(BUILT_MADE)
MADE[("sparse_compressed_tensor", "comp_plain_value_size")] = [_compressed]


def _jagged(torch, g):
    """A jagged nested tensor of components [3, 4] and [2, 4] (its values [5, 4] at offsets 0, 3, 5)."""
    values = torch.rand(5, 4, dtype=torch.float64, generator=g)
    return torch.nested.nested_tensor_from_jagged(values, offsets=torch.tensor([0, 3, 5]))


def _chunk_jagged(torch, g):
    return f"a jagged nested [2, j, 4] in 2 chunks of its last dim, {VARIED}", [_jagged(torch, g), 2, 2]


# an AutogradNestedTensor formula for jagged nested tensors only (chunk_backward_nested asserts the layout): a
# jagged self whose values vary (its offsets fixed)
NESTED_MADE = {("chunk", "default"): [_chunk_jagged]}


def with_values(torch, sparse, values):
    """The sparse tensor of `sparse`'s layout and indices whose values are `values` (COO or CSR, no dense dims; a
    jagged nested tensor: of its offsets)."""
    if sparse.is_nested:
        return torch.nested.nested_tensor_from_jagged(values, offsets=sparse.offsets())
    if sparse.layout == torch.sparse_coo:
        return torch.sparse_coo_tensor(sparse._indices(), values, sparse.shape, is_coalesced=True)
    return torch.sparse_csr_tensor(sparse.crow_indices(), sparse.col_indices(), values, sparse.shape)


def on_values(torch, grad, sparse):
    """A grad with respect to the sparse tensor `sparse` as one with respect to its values: the dense grad at each
    value's place (the adjoint of with_values, values -> the sparse tensor; a grad outside the pattern is not seen)."""
    if grad is None:
        return None
    if sparse.is_nested:  # (jagged: the grad's components in order are its values)
        return torch.cat([c.reshape(-1) for c in grad.unbind()]).reshape(sparse.values().shape)
    places = with_values(torch, sparse, torch.arange(1, sparse._nnz() + 1, dtype=torch.float64)).to_dense()
    order = places.reshape(-1).nonzero().reshape(-1)
    index = order[places.reshape(-1)[order].long().argsort()]  # (the flat place of value k, in the values' order)
    dense = grad.to_dense() if grad.layout != torch.strided else grad
    return dense.reshape(-1)[index]
