"""The whole chain's verdict on a formula for each argument kind of the 15 releases, in each place
(tests/formulas/argkinds.py; written by `python -m tests.formulas.argkinds --write`): (kind, place) -> the
first gate that rejects it ("loader", "codegen", "g++"), or "" where torchgen and g++ accept it."""

# kind -> (2.13 function, the argument of that kind, another Tensor argument or "")
FUNCTIONS = {
    "Device": ("_resize_output(Tensor self, SymInt[] size, Device device) -> Tensor", "device", "self"),
    "Device?": (
        "new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
        "device",
        "self",
    ),
    "Generator?": ("random(Tensor self, *, Generator? generator=None) -> Tensor", "generator", "self"),
    "Layout?": (
        "_spdiags(Tensor diagonals, Tensor offsets, int[] shape, Layout? layout=None) -> Tensor",
        "layout",
        "diagonals",
    ),
    "MemoryFormat?": (
        "resize(Tensor self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor",
        "memory_format",
        "self",
    ),
    "Scalar": ("native_norm(Tensor self, Scalar p=2) -> Tensor", "p", "self"),
    "Scalar?": (
        "native_norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, ScalarType? dtype) -> Tensor",
        "p",
        "self",
    ),
    "ScalarType": ("view_copy.dtype(Tensor self, ScalarType dtype) -> Tensor", "dtype", "self"),
    "ScalarType?": ("_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", "dtype", "self"),
    "Scalar[]": ("_foreach_add.ScalarList(Tensor[] self, Scalar[] scalars) -> Tensor[]", "scalars", ""),
    "Storage": ("set.source_Storage(Tensor self, Storage source) -> Tensor", "source", "self"),
    "Stream": ("record_stream(Tensor(a!) self, Stream s) -> ()", "s", ""),
    "SymInt": ("select_copy.int(Tensor self, int dim, SymInt index) -> Tensor", "index", "self"),
    "SymInt?": (
        "repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor",
        "output_size",
        "repeats",
    ),
    "SymInt[1]": (
        "upsample_nearest1d_backward.grad_input(Tensor grad_output, SymInt[1] output_size, SymInt[3] input_size, float? scales=None, *, Tensor(a!) grad_input) -> Tensor(a!)",
        "output_size",
        "grad_output",
    ),
    "SymInt[2]": (
        "reflection_pad1d_backward.grad_input(Tensor grad_output, Tensor self, SymInt[2] padding, *, Tensor(a!) grad_input) -> Tensor(a!)",
        "padding",
        "grad_output",
    ),
    "SymInt[3]": (
        "mkldnn_reorder_conv3d_weight(Tensor self, SymInt[3] padding=0, SymInt[3] stride=1, SymInt[3] dilation=1, SymInt groups=1, SymInt[]? input_size=None) -> Tensor",
        "padding",
        "self",
    ),
    "SymInt[4]": (
        "reflection_pad2d_backward.grad_input(Tensor grad_output, Tensor self, SymInt[4] padding, *, Tensor(a!) grad_input) -> Tensor(a!)",
        "padding",
        "grad_output",
    ),
    "SymInt[5]": (
        "upsample_nearest3d_backward.grad_input(Tensor grad_output, SymInt[3] output_size, SymInt[5] input_size, float? scales_d=None, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)",
        "input_size",
        "grad_output",
    ),
    "SymInt[6]": (
        "reflection_pad3d_backward.grad_input(Tensor grad_output, Tensor self, SymInt[6] padding, *, Tensor(a!) grad_input) -> Tensor(a!)",
        "padding",
        "grad_output",
    ),
    "SymInt[]": ("view_copy(Tensor self, SymInt[] size) -> Tensor", "size", "self"),
    "SymInt[]?": (
        "mkldnn_reorder_conv2d_weight(Tensor self, SymInt[2] padding=0, SymInt[2] stride=1, SymInt[2] dilation=1, SymInt groups=1, SymInt[]? input_size=None) -> Tensor",
        "input_size",
        "self",
    ),
    "Tensor": ("hspmm(Tensor mat1, Tensor mat2) -> Tensor", "mat1", "mat2"),
    "Tensor(a -> *)": ("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", "self", ""),
    "Tensor(a!)": ("xlogy.OutTensor(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", "out", "self"),
    "Tensor(a!)[]": ("_foreach_div_.Tensor(Tensor(a!)[] self, Tensor other) -> ()", "self", "other"),
    "Tensor(a)": ("_make_dual(Tensor(a) primal, Tensor tangent, int level) -> Tensor(a)", "primal", "tangent"),
    "Tensor(b!)": (
        "rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, Generator? generator=None) -> Tensor",
        "noise",
        "self",
    ),
    "Tensor(b!)[]": (
        "_fused_adagrad_.tensor_lr(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] state_sums, Tensor[] state_steps, *, Tensor lr, float lr_decay, float weight_decay, float eps, bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()",
        "grads",
        "lr",
    ),
    "Tensor(c!)": (
        "_linalg_det.result(Tensor A, *, Tensor(a!) result, Tensor(b!) LU, Tensor(c!) pivots) -> (Tensor(a!) result, Tensor(b!) LU, Tensor(c!) pivots)",
        "pivots",
        "A",
    ),
    "Tensor(c!)[]": (
        "_fused_adagrad_.tensor_lr(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] state_sums, Tensor[] state_steps, *, Tensor lr, float lr_decay, float weight_decay, float eps, bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()",
        "state_sums",
        "lr",
    ),
    "Tensor(d!)": (
        "_linalg_slogdet.sign(Tensor A, *, Tensor(a!) sign, Tensor(b!) logabsdet, Tensor(c!) LU, Tensor(d!) pivots) -> (Tensor(a!) sign, Tensor(b!) logabsdet, Tensor(c!) LU, Tensor(d!) pivots)",
        "pivots",
        "A",
    ),
    "Tensor(d!)[]": (
        "_fused_adam_.tensor_lr(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, Tensor lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()",
        "exp_avg_sqs",
        "lr",
    ),
    "Tensor(e!)": (
        "_thnn_fused_gru_cell_backward.out(Tensor grad_hy, Tensor workspace, bool has_bias, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2, Tensor(d!) out3, Tensor(e!) out4) -> (Tensor(a!), Tensor(b!), Tensor(c!), Tensor(d!), Tensor(e!))",
        "out4",
        "grad_hy",
    ),
    "Tensor(e!)[]": (
        "_fused_adam_.tensor_lr(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, Tensor lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()",
        "max_exp_avg_sqs",
        "lr",
    ),
    "Tensor(f!)": (
        "_native_batch_norm_legit.out(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps, *, Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd) -> (Tensor(d!), Tensor(e!), Tensor(f!))",
        "save_invstd",
        "input",
    ),
    "Tensor(g!)": (
        "_batch_norm_with_update.out(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, float momentum, float eps, *, Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd, Tensor(g!) reserve) -> (Tensor(d!), Tensor(e!), Tensor(f!), Tensor(g!))",
        "reserve",
        "input",
    ),
    "Tensor?": ("bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor", "weights", "self"),
    "Tensor?[]": (
        "_index_put_impl(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, bool unsafe=False) -> Tensor",
        "indices",
        "self",
    ),
    "Tensor[]": (
        "_padded_dense_to_jagged_forward(Tensor dense, Tensor[] offsets, SymInt? total_L=None) -> Tensor",
        "offsets",
        "dense",
    ),
    "bool": ("_coalesced(Tensor self, bool coalesced) -> Tensor", "coalesced", "self"),
    "bool?": (
        "new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
        "pin_memory",
        "self",
    ),
    "bool[2]": (
        "matmul_backward(Tensor grad, Tensor self, Tensor other, bool[2] mask) -> (Tensor, Tensor)",
        "mask",
        "grad",
    ),
    "bool[3]": (
        "mkldnn_linear_backward(Tensor self, Tensor grad_output, Tensor weight, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
        "output_mask",
        "self",
    ),
    "bool[4]": (
        "_scaled_dot_product_efficient_attention_backward(Tensor grad_out_, Tensor query, Tensor key, Tensor value, Tensor attn_bias, Tensor out, Tensor logsumexp, Tensor philox_seed, Tensor philox_offset, float dropout_p, bool[4] grad_input_mask, bool is_causal=False, *, float? scale=None) -> (Tensor, Tensor, Tensor, Tensor)",
        "grad_input_mask",
        "grad_out_",
    ),
    "float": ("_masked_scale(Tensor self, Tensor mask, float scale) -> Tensor", "scale", "self"),
    "float?": (
        "logit_backward.grad_input(Tensor grad_output, Tensor self, float? eps=None, *, Tensor(a!) grad_input) -> Tensor(a!)",
        "eps",
        "grad_output",
    ),
    "float[]?": ("_test_optional_floatlist(Tensor values, float[]? addends) -> Tensor", "addends", "values"),
    "int": ("_logcumsumexp(Tensor self, int dim) -> Tensor", "dim", "self"),
    "int?": ("random.from(Tensor self, int from, int? to, *, Generator? generator=None) -> Tensor", "to", "self"),
    "int[1]": (
        "_sparse_csr_sum.dim_dtype(Tensor self, int[1] dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        "dim",
        "self",
    ),
    "int[1]?": (
        "_nested_sum_backward(Tensor grad, Tensor self, int[1]? dim, bool keepdim=False) -> Tensor",
        "dim",
        "grad",
    ),
    "int[2]": (
        "quantized_max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
        "kernel_size",
        "self",
    ),
    "int[2]?": ("_test_optional_filled_intlist(Tensor values, int[2]? addends) -> Tensor", "addends", "values"),
    "int[3]": (
        "quantized_max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor",
        "kernel_size",
        "self",
    ),
    "int[]": ("permute_copy(Tensor self, int[] dims) -> Tensor", "dims", "self"),
    "int[]?": ("_test_optional_intlist(Tensor values, int[]? addends) -> Tensor", "addends", "values"),
    "str": (
        "_functional_assert_scalar(Scalar self, str assert_msg, Tensor dep_token) -> Tensor",
        "assert_msg",
        "dep_token",
    ),
    "str?": (
        "_mixed_dtypes_linear(Tensor input, Tensor weight, Tensor scale, *, Tensor? bias=None, str? activation=None) -> Tensor",
        "activation",
        "input",
    ),
}

VERDICTS = {
    (
        "Device",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'device'} in _resize_"
    (
        "Device",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'device'} in _resize_"
    (
        "Device",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'device'} in _resize_"
    (
        "Device",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'device'} in _resize_"
    (
        "Device",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'device'} in _resize_"
    (
        "Device?",
        "backward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Device?",
        "forward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Device?",
        "other_forward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Device?",
        "auto_linear",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Device?",
        "element_wise",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Generator?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'generator'} in rando"
    (
        "Generator?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'generator'} in rando"
    (
        "Generator?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'generator'} in rando"
    (
        "Generator?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'generator'} in rando"
    (
        "Generator?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'generator'} in rando"
    (
        "Layout?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'layout'} in _spdiags"
    (
        "Layout?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'layout'} in _spdiags"
    (
        "Layout?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'layout'} in _spdiags"
    (
        "Layout?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'layout'} in _spdiags"
    (
        "Layout?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'layout'} in _spdiags"
    (
        "MemoryFormat?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'memory_format'} in r"
    (
        "MemoryFormat?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'memory_format'} in r"
    (
        "MemoryFormat?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'memory_format'} in r"
    (
        "MemoryFormat?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'memory_format'} in r"
    (
        "MemoryFormat?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'memory_format'} in r"
    (
        "Scalar",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'p'} in native_norm"
    (
        "Scalar",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'p'} in native_norm"
    (
        "Scalar",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'p'} in native_norm"
    (
        "Scalar",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'p'} in native_norm"
    (
        "Scalar",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'p'} in native_norm"
    (
        "Scalar?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'p'} in native_norm"
    (
        "Scalar?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'p'} in native_norm"
    (
        "Scalar?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'p'} in native_norm"
    (
        "Scalar?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'p'} in native_norm"
    (
        "Scalar?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'p'} in native_norm"
    (
        "ScalarType",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dtype'} in view_copy"
    (
        "ScalarType",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dtype'} in view_copy"
    (
        "ScalarType",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dtype'} in view_copy"
    (
        "ScalarType",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dtype'} in view_copy"
    (
        "ScalarType",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dtype'} in view_copy"
    (
        "ScalarType?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dtype'} in _safe_sof"
    (
        "ScalarType?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dtype'} in _safe_sof"
    (
        "ScalarType?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dtype'} in _safe_sof"
    (
        "ScalarType?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dtype'} in _safe_sof"
    (
        "ScalarType?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dtype'} in _safe_sof"
    (
        "Scalar[]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'scalars'} in _foreac"
    (
        "Scalar[]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'scalars'} in _foreac"
    (
        "Scalar[]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'scalars'} in _foreac"
    (
        "Scalar[]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'scalars'} in _foreac"
    ("Storage", "backward"): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'source'} in set"
    ("Storage", "forward"): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'source'} in set"
    (
        "Storage",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'source'} in set"
    (
        "Storage",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'source'} in set"
    (
        "Storage",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'source'} in set"
    (
        "Stream",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'s'} in record_stream"
    ("Stream", "forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    ("Stream", "auto_linear"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    ("Stream", "element_wise"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "SymInt",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'index'} in select_co"
    (
        "SymInt",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'index'} in select_co"
    (
        "SymInt",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'index'} in select_co"
    (
        "SymInt",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'index'} in select_co"
    (
        "SymInt",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'index'} in select_co"
    (
        "SymInt?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_size'} in rep"
    (
        "SymInt?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_size'} in rep"
    (
        "SymInt?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_size'} in rep"
    (
        "SymInt?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_size'} in rep"
    (
        "SymInt?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_size'} in rep"
    (
        "SymInt[1]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_size'} in ups"
    (
        "SymInt[1]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_size'} in ups"
    (
        "SymInt[1]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_size'} in ups"
    (
        "SymInt[1]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_size'} in ups"
    (
        "SymInt[1]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_size'} in ups"
    (
        "SymInt[2]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[2]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[2]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[2]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[2]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[3]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in mkldnn_"
    (
        "SymInt[3]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in mkldnn_"
    (
        "SymInt[3]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in mkldnn_"
    (
        "SymInt[3]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in mkldnn_"
    (
        "SymInt[3]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in mkldnn_"
    (
        "SymInt[4]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[4]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[4]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[4]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[4]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[5]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'input_size'} in upsa"
    (
        "SymInt[5]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'input_size'} in upsa"
    (
        "SymInt[5]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'input_size'} in upsa"
    (
        "SymInt[5]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'input_size'} in upsa"
    (
        "SymInt[5]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'input_size'} in upsa"
    (
        "SymInt[6]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[6]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[6]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[6]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[6]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'padding'} in reflect"
    (
        "SymInt[]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'size'} in view_copy"
    (
        "SymInt[]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'size'} in view_copy"
    (
        "SymInt[]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'size'} in view_copy"
    (
        "SymInt[]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'size'} in view_copy"
    (
        "SymInt[]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'size'} in view_copy"
    (
        "SymInt[]?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'input_size'} in mkld"
    (
        "SymInt[]?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'input_size'} in mkld"
    (
        "SymInt[]?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'input_size'} in mkld"
    (
        "SymInt[]?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'input_size'} in mkld"
    (
        "SymInt[]?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'input_size'} in mkld"
    ("Tensor", "backward"): "",
    ("Tensor", "forward"): "",
    ("Tensor", "other_forward"): "",
    ("Tensor", "auto_linear"): "",
    ("Tensor", "element_wise"): "",
    ("Tensor(a -> *)", "backward"): "",
    (
        "Tensor(a -> *)",
        "forward",
    ): "g++",  # 'UnbindBackward0 (forward): no match for ‘operator=’ in ‘result_new_fw_grad_opt ='
    ("Tensor(a -> *)", "auto_linear"): "",
    (
        "Tensor(a -> *)",
        "element_wise",
    ): "g++",  # 'UnbindBackward0 (forward): no match for ‘operator=’ in ‘result_new_fw_grad_opt ='
    (
        "Tensor(a!)",
        "backward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(a!)",
        "forward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(a!)",
        "other_forward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(a!)",
        "auto_linear",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(a!)",
        "element_wise",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(a!)[]",
        "backward",
    ): "codegen",  # 'codegen: AssertionError: foreach_arg_type (Tensor) != ref_arg.type (Tensor[])'
    ("Tensor(a!)[]", "forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(a!)[]",
        "other_forward",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(a!)[]",
        "auto_linear",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(a!)[]",
        "element_wise",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    ("Tensor(a)", "backward"): "",
    ("Tensor(a)", "forward"): "",
    ("Tensor(a)", "other_forward"): "",
    ("Tensor(a)", "auto_linear"): "",
    ("Tensor(a)", "element_wise"): "",
    ("Tensor(b!)", "backward"): "",
    ("Tensor(b!)", "forward"): "",
    ("Tensor(b!)", "other_forward"): "",
    ("Tensor(b!)", "auto_linear"): "",
    ("Tensor(b!)", "element_wise"): "",
    ("Tensor(b!)[]", "backward"): "",
    ("Tensor(b!)[]", "forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(b!)[]",
        "other_forward",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(b!)[]",
        "auto_linear",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(b!)[]",
        "element_wise",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(c!)",
        "backward",
    ): "codegen",  # 'codegen: AssertionError: Expected the number of forward derivatives implemented '
    (
        "Tensor(c!)",
        "forward",
    ): "codegen",  # 'codegen: AssertionError: Expected the number of forward derivatives implemented '
    (
        "Tensor(c!)",
        "other_forward",
    ): "codegen",  # 'codegen: AssertionError: Expected the number of forward derivatives implemented '
    (
        "Tensor(c!)",
        "auto_linear",
    ): "loader",  # 'load_derivatives: RuntimeError: Derivative definition of _linalg_det in derivati'
    (
        "Tensor(c!)",
        "element_wise",
    ): "loader",  # 'load_derivatives: RuntimeError: Derivative definition of _linalg_det in derivati'
    ("Tensor(c!)[]", "backward"): "",
    ("Tensor(c!)[]", "forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(c!)[]",
        "other_forward",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(c!)[]",
        "auto_linear",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(c!)[]",
        "element_wise",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(d!)",
        "backward",
    ): "codegen",  # 'codegen: AssertionError: Expected the number of forward derivatives implemented '
    ("Tensor(d!)", "forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 4"
    (
        "Tensor(d!)",
        "other_forward",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 4"
    (
        "Tensor(d!)",
        "auto_linear",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 4"
    (
        "Tensor(d!)",
        "element_wise",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 4"
    ("Tensor(d!)[]", "backward"): "",
    ("Tensor(d!)[]", "forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(d!)[]",
        "other_forward",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(d!)[]",
        "auto_linear",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(d!)[]",
        "element_wise",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(e!)",
        "backward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(e!)",
        "forward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(e!)",
        "other_forward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(e!)",
        "auto_linear",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(e!)",
        "element_wise",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    ("Tensor(e!)[]", "backward"): "",
    ("Tensor(e!)[]", "forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(e!)[]",
        "other_forward",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(e!)[]",
        "auto_linear",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(e!)[]",
        "element_wise",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 0"
    (
        "Tensor(f!)",
        "backward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    ("Tensor(f!)", "forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 3"
    (
        "Tensor(f!)",
        "other_forward",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 3"
    (
        "Tensor(f!)",
        "auto_linear",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 3"
    (
        "Tensor(f!)",
        "element_wise",
    ): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 3"
    (
        "Tensor(g!)",
        "backward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(g!)",
        "forward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(g!)",
        "other_forward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(g!)",
        "auto_linear",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "Tensor(g!)",
        "element_wise",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    ("Tensor?", "backward"): "",
    ("Tensor?", "forward"): "",
    ("Tensor?", "other_forward"): "",
    ("Tensor?", "auto_linear"): "",
    ("Tensor?", "element_wise"): "",
    ("Tensor?[]", "backward"): "",
    (
        "Tensor?[]",
        "forward",
    ): "g++",  # "IndexPutImplBackward0 (forward): in the generated code (not a formula's text): i"
    ("Tensor?[]", "other_forward"): "",
    (
        "Tensor?[]",
        "auto_linear",
    ): "g++",  # "IndexPutImplBackward0 (forward): in the generated code (not a formula's text): i"
    (
        "Tensor?[]",
        "element_wise",
    ): "g++",  # "IndexPutImplBackward0 (forward): in the generated code (not a formula's text): i"
    ("Tensor[]", "backward"): "",
    (
        "Tensor[]",
        "forward",
    ): "codegen",  # 'codegen: RuntimeError: No differentiable input to "_padded_dense_to_jagged_forwa'
    ("Tensor[]", "other_forward"): "",
    (
        "Tensor[]",
        "auto_linear",
    ): "g++",  # "PaddedDenseToJaggedBackward0 (forward): in the generated code (not a formula's t"
    (
        "Tensor[]",
        "element_wise",
    ): "g++",  # "PaddedDenseToJaggedBackward0 (forward): in the generated code (not a formula's t"
    (
        "bool",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'coalesced'} in _coal"
    (
        "bool",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'coalesced'} in _coal"
    (
        "bool",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'coalesced'} in _coal"
    (
        "bool",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'coalesced'} in _coal"
    (
        "bool",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'coalesced'} in _coal"
    (
        "bool?",
        "backward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "bool?",
        "forward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "bool?",
        "other_forward",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "bool?",
        "auto_linear",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "bool?",
        "element_wise",
    ): "loader",  # 'load_derivatives: AssertionError: No matching output for forward derivative defi'
    (
        "bool[2]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'mask'} in matmul_bac"
    ("bool[2]", "forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 2"
    ("bool[2]", "other_forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 2"
    ("bool[2]", "auto_linear"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 2"
    ("bool[2]", "element_wise"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 2"
    (
        "bool[3]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'output_mask'} in mkl"
    ("bool[3]", "forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 3"
    ("bool[3]", "other_forward"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 3"
    ("bool[3]", "auto_linear"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 3"
    ("bool[3]", "element_wise"): "loader",  # "load_derivatives: AssertionError: Expected 1 return for 'result', got 3"
    (
        "bool[4]",
        "backward",
    ): "loader",  # 'load_derivatives: RuntimeError: Schema for _scaled_dot_product_efficient_attenti'
    (
        "bool[4]",
        "forward",
    ): "loader",  # 'load_derivatives: RuntimeError: Schema for _scaled_dot_product_efficient_attenti'
    (
        "bool[4]",
        "other_forward",
    ): "loader",  # 'load_derivatives: RuntimeError: Schema for _scaled_dot_product_efficient_attenti'
    (
        "bool[4]",
        "auto_linear",
    ): "loader",  # 'load_derivatives: RuntimeError: Schema for _scaled_dot_product_efficient_attenti'
    (
        "bool[4]",
        "element_wise",
    ): "loader",  # 'load_derivatives: RuntimeError: Schema for _scaled_dot_product_efficient_attenti'
    (
        "float",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'scale'} in _masked_s"
    (
        "float",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'scale'} in _masked_s"
    (
        "float",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'scale'} in _masked_s"
    (
        "float",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'scale'} in _masked_s"
    (
        "float",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'scale'} in _masked_s"
    (
        "float?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'eps'} in logit_backw"
    (
        "float?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'eps'} in logit_backw"
    (
        "float?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'eps'} in logit_backw"
    (
        "float?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'eps'} in logit_backw"
    (
        "float?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'eps'} in logit_backw"
    (
        "float[]?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "float[]?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "float[]?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "float[]?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "float[]?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "int",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _logcumsume"
    ("int", "forward"): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _logcumsume"
    (
        "int",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _logcumsume"
    (
        "int",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _logcumsume"
    (
        "int",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _logcumsume"
    ("int?", "backward"): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'to'} in random"
    ("int?", "forward"): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'to'} in random"
    (
        "int?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'to'} in random"
    ("int?", "auto_linear"): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'to'} in random"
    ("int?", "element_wise"): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'to'} in random"
    (
        "int[1]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _sparse_csr"
    (
        "int[1]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _sparse_csr"
    (
        "int[1]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _sparse_csr"
    (
        "int[1]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _sparse_csr"
    (
        "int[1]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _sparse_csr"
    (
        "int[1]?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _nested_sum"
    (
        "int[1]?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _nested_sum"
    (
        "int[1]?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _nested_sum"
    (
        "int[1]?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _nested_sum"
    (
        "int[1]?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dim'} in _nested_sum"
    (
        "int[2]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'kernel_size'} in qua"
    (
        "int[2]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'kernel_size'} in qua"
    (
        "int[2]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'kernel_size'} in qua"
    (
        "int[2]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'kernel_size'} in qua"
    (
        "int[2]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'kernel_size'} in qua"
    (
        "int[2]?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "int[2]?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "int[2]?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "int[2]?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "int[2]?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "int[3]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'kernel_size'} in qua"
    (
        "int[3]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'kernel_size'} in qua"
    (
        "int[3]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'kernel_size'} in qua"
    (
        "int[3]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'kernel_size'} in qua"
    (
        "int[3]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'kernel_size'} in qua"
    (
        "int[]",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dims'} in permute_co"
    (
        "int[]",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dims'} in permute_co"
    (
        "int[]",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dims'} in permute_co"
    (
        "int[]",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dims'} in permute_co"
    (
        "int[]",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'dims'} in permute_co"
    (
        "int[]?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "int[]?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "int[]?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "int[]?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "int[]?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'addends'} in _test_o"
    (
        "str",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'assert_msg'} in _fun"
    ("str", "forward"): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'assert_msg'} in _fun"
    (
        "str",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'assert_msg'} in _fun"
    (
        "str",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'assert_msg'} in _fun"
    (
        "str",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'assert_msg'} in _fun"
    (
        "str?",
        "backward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'activation'} in _mix"
    (
        "str?",
        "forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'activation'} in _mix"
    (
        "str?",
        "other_forward",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'activation'} in _mix"
    (
        "str?",
        "auto_linear",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'activation'} in _mix"
    (
        "str?",
        "element_wise",
    ): "codegen",  # "codegen: RuntimeError: Missing arguments for derivatives: {'activation'} in _mix"
}

# kinds of the releases no 2.13 function has an argument of (no chain of 2.13 to judge them)
NO_2_13_FUNCTION = (
    "DeviceIndex",
    "Dimname",
    "Dimname[1]",
    "Dimname[]",
    "Dimname[]?",
    "Layout",
    "MemoryFormat",
    "SymInt[1]?",
)
