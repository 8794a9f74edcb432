"""Hand-picked autograd nodes of the real 2.13 derivatives.yaml, checked against text
written out here (not against torchgen: the parity test does that for all nodes)."""

from __future__ import annotations

import pytest

from derivls.codegen import GeneratedNode, generate_node, generate_nodes, infos_with_derivatives_list
from derivls.derivatives.loader import load_derivatives


@pytest.fixture(scope="module")
def infos(real_files):
    result, _ = load_derivatives(real_files.derivatives, real_files.native, real_files.tags)
    return result


@pytest.fixture(scope="module")
def by_op(infos):
    return {info.op: info for info in infos_with_derivatives_list(infos)}


@pytest.fixture(scope="module")
def nodes(infos):
    return {node.op: node for node in generate_nodes(infos)}


def block(text: str, start: str, end: str) -> str:
    """The lines of ``text`` from the one starting with ``start`` to the next one starting with ``end``."""
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(start))
    j = next(k for k in range(i + 1, len(lines)) if lines[k].startswith(end))
    return "\n".join(lines[i : j + 1])


def test_generate_nodes_order_and_shape(infos, nodes):
    ordered = generate_nodes(infos)
    assert len(ordered) == 649
    assert ordered[0].op == "AbsBackward0"
    assert all(isinstance(n, GeneratedNode) for n in ordered)
    assert len({n.op for n in ordered}) == len(ordered)
    # An iterable of infos gives the same nodes as the dict.
    assert generate_nodes(infos_with_derivatives_list(infos)) == ordered


# --- optional tensors: clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) --------

CLAMP_DECLARATION = """\
#ifdef _WIN32
struct ClampBackward0 : public TraceableFunction {
  TORCH_API ClampBackward0() = default;
#else
struct TORCH_API ClampBackward0 : public TraceableFunction {
#endif
  using TraceableFunction::TraceableFunction;
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "ClampBackward0"; }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    max_.reset_data();
    min_.reset_data();
    self_.reset_data();
  }

  void compiled_args(CompiledNodeArgs& args) const override;
  variable_list apply_with_saved(const variable_list& inputs, SwapSavedVariables& saved) override;
  SavedVariable max_;
  SavedVariable min_;
  SavedVariable self_;

};
"""


def test_optional_tensors_clamp(nodes):
    node = nodes["ClampBackward0"]
    assert node.declaration == CLAMP_DECLARATION
    # Tensor? inputs are saved as SavedVariables, passed as Tensor&, sorted by name.
    assert "std::array<bool,3> needs_input_grad, Tensor& max, Tensor& min, Tensor& self)\n" in node.definition
    # The two-variable formula (min, max) gets a grad_input_mask and copies std::get<i>.
    assert (
        block(node.definition, "  if (needs_input_grad[1] || needs_input_grad[2]) {", "  }")
        == """\
  if (needs_input_grad[1] || needs_input_grad[2]) {
      auto grad_input_mask = std::array<bool, 2>{
        needs_input_grad[1],
        needs_input_grad[2],
      };
    auto grad_result = clamp_backward_min_max(grad, self, min, max, grad_input_mask);
      if (needs_input_grad[/*min*/1]) {
        copy_range(grad_inputs, min_ix, std::get<0>(grad_result));
      }
      if (needs_input_grad[/*max*/2]) {
        copy_range(grad_inputs, max_ix, std::get<1>(grad_result));
      }
  }"""
    )
    # The single-variable formula for the Tensor input checks for undefined grads.
    assert (
        "    auto grad_result = any_grad_defined ? (clamp_backward(grad, self, min, max)) : Tensor();\n"
        in node.definition
    )
    assert node.definition.count("bool any_grad_defined = any_variable_defined(grads);") == 1
    assert (
        "    args.collect(max_, false);\n    args.collect(min_, false);\n    args.collect(self_, false);\n"
        in node.definition
    )


# --- output_differentiability: topk returns (values, indices), indices not differentiable -----

TOPK_DECLARATION = """\
#ifdef _WIN32
struct TopkBackward0 : public TraceableFunction {
  TORCH_API TopkBackward0() = default;
#else
struct TORCH_API TopkBackward0 : public TraceableFunction {
#endif
  using TraceableFunction::TraceableFunction;
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "TopkBackward0"; }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    indices_.reset_data();
  }

  void compiled_args(CompiledNodeArgs& args) const override;
  variable_list apply_with_saved(const variable_list& inputs, SwapSavedVariables& saved) override;
  int64_t dim = 0;
  std::vector<c10::SymInt> self_sym_sizes;
  SavedVariable indices_;

};
"""


def test_output_differentiability_topk(by_op, nodes):
    assert list(by_op["TopkBackward0"].output_differentiability) == [True, False]
    node = nodes["TopkBackward0"]
    assert node.declaration == TOPK_DECLARATION
    # The saved output is unpacked with getptr() and collected as an output.
    assert "  auto indices = indices_.unpack(getptr());\n" in node.definition
    assert "    args.collect(indices_, true);\n" in node.definition
    assert "    args.collect(dim);\n" in node.definition
    assert (
        "  std::array<bool,1> needs_input_grad, int64_t& dim, std::vector<c10::SymInt>& self_sym_sizes, Tensor& indices)\n"
        in node.definition
    )
    assert "      torch::dynamo::autograd::IValuePacker<std::vector<c10::SymInt>>::packed_type(),\n" in node.definition


# --- multi-output: _linalg_slogdet returns (sign, logabsdet, LU, pivots) with named grads ----


def test_multi_output_slogdet(nodes):
    node = nodes["LinalgSlogdetBackward0"]
    # Named gradients alias grads[i] in sorted name order; no plain `grad`.
    assert (
        block(node.definition, "  variable_list grad_inputs(gen.size());", "  if (needs_input_grad[/*A*/0]) {")
        == """\
  variable_list grad_inputs(gen.size());
  const auto& grad_logabsdet = grads[1];
  const auto& grad_sign = grads[0];
  bool any_grad_defined = any_variable_defined(grads);
  if (needs_input_grad[/*A*/0]) {"""
    )
    assert "const auto& grad = grads[0];" not in node.definition
    # The input A is saved plainly, the outputs LU, pivots and sign with getptr().
    assert (
        "  auto A = A_.unpack();\n  auto LU = LU_.unpack(getptr());\n  auto pivots = pivots_.unpack(getptr());\n  auto sign = sign_.unpack(getptr());\n"
        in node.definition
    )
    assert (
        "  SavedVariable A_;\n  SavedVariable LU_;\n  SavedVariable pivots_;\n  SavedVariable sign_;\n"
        in node.declaration
    )


# --- TensorList saved: _foreach_div.List(Tensor[] self, Tensor[] other) ----------------------


def test_tensor_list_saved_foreach_div(nodes):
    node = nodes["ForeachDivBackward0"]
    assert (
        block(node.declaration, "  void release_variables() override {", "  }")
        == """\
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    other_.clear();
    other_released_ = true;
    self_.clear();
    self_released_ = true;
  }"""
    )
    assert node.declaration.endswith(
        "  std::vector<SavedVariable> other_;\n"
        "  bool other_released_ = false;\n"
        "  std::vector<SavedVariable> self_;\n"
        "  bool self_released_ = false;\n"
        "  size_t self_size_;\n"
        "  size_t other_size_;\n"
        "};\n"
    )
    assert (
        "  std::array<bool,2> needs_input_grad, size_t self_size_, size_t other_size_, std::vector<Tensor>& other, std::vector<Tensor>& self)\n"
        in node.definition
    )
    assert "  auto self_ix = gen.range(self_size_);\n  auto other_ix = gen.range(other_size_);\n" in node.definition
    assert (
        "  TORCH_CHECK(!other_released_, ERR_BACKWARD_TWICE);\n  TORCH_CHECK(!self_released_, ERR_BACKWARD_TWICE);\n  auto other = unpack_list(other_, nullptr);\n"
        in node.definition
    )
    # foreach nodes loop over grads; TensorList inputs get no any_grad_defined check.
    assert "  if (needs_input_grad[/*self*/0]) {  // self\n    std::vector<Tensor> grad_result;\n" in node.definition
    assert (
        "grad_result.emplace_back(div_tensor_self_backward(grads[i], other[i], self[i].scalar_type()));"
        in node.definition
    )
    assert "any_grad_defined" not in node.definition


def test_list_of_optional_tensors_saved_index(nodes):
    node = nodes["IndexBackward0"]
    assert (
        "  std::vector<SavedVariable> indices_;\n  bool indices_released_ = false;\n  at::TensorOptions self_options;\n"
        in node.declaration
    )
    assert "  auto indices = unpack_opt_list(indices_);\n" in node.definition
    assert "torch::List<std::optional<Tensor>>& indices, at::TensorOptions& self_options" in node.definition
    assert (
        "      torch::dynamo::autograd::IValuePacker<torch::List<std::optional<Tensor>>>::packed_type(),\n"
        in node.definition
    )


def test_view_function_derives_from_node(nodes):
    # Nodes of VIEW_FUNCTIONS are untraceable: they derive from Node.
    assert "struct TORCH_API ExpandBackward0 : public Node {\n" in nodes["ExpandBackward0"].declaration
    assert "  using Node::Node;\n" in nodes["ExpandBackward0"].declaration


def test_retain_variables(by_op, nodes):
    ops = [op for op, info in by_op.items() if any("retain_variables" in d.formula for d in info.derivatives)]
    assert ops
    node = nodes[ops[0]]
    assert (
        "  bool retain_variables = true;\n  void will_release_variables() override {\n    retain_variables = false;\n  }\n"
        in node.declaration
    )
    assert ", bool retain_variables)\n" in node.definition


def test_generate_node_matches_generate_nodes(by_op, nodes):
    assert generate_node(by_op["ClampBackward0"]) == nodes["ClampBackward0"]
