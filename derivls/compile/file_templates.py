"""What every generated translation unit starts from: the precompiled header's name and torchgen's
Functions.cpp and VariableType.cpp templates (beside the yaml, else the built-in copies of 2.13's)."""

from __future__ import annotations

import re
from pathlib import Path

PCH_NAME = "derivls-autograd.h"

# The head of torchgen's templates (torch 2.13), used when the templates are not beside the yaml.
FALLBACK_FUNCTIONS_CPP = """\
#include "torch/csrc/autograd/FunctionsManual.h"
#include "torch/csrc/dynamo/compiled_autograd.h"

// ${generated_comment}

using namespace torch::autograd::generated::details;
using at::Tensor;
using at::Scalar;
using at::IntArrayRef;
using at::TensorList;

namespace torch::autograd::generated {

static at::IValue compute_output_metadata(const torch::autograd::edge_list& next_edges) {
  auto output_metadata = torch::dynamo::autograd::IValuePacker<
      std::vector<std::optional<InputMetadata>>>::pack(
              torch::dynamo::autograd::get_input_metadata(next_edges));
  return output_metadata;
}

static C10_NOINLINE variable_list compiled_autograd_apply_functional(
    const PackedArgs& packed_args,
    const edge_list& next_edges,
    SwapSavedVariables& saved,
    const variable_list& grads,
    const std::string& name) {
  auto output_metadata = compute_output_metadata(next_edges);
  const auto& pyinterface = torch::dynamo::autograd::getPyCompilerInterface();
  return pyinterface->call_function(
      saved.get_py_compiler(),
      "apply_functional",
      name,
      grads,
      packed_args.vec(),
      output_metadata);
}

${autograd_function_definitions}

} // namespace torch::autograd::generated
"""

FALLBACK_VARIABLE_TYPE_INCLUDES = """\
#include "torch/csrc/autograd/VariableTypeUtils.h"
#include "torch/csrc/autograd/generated/VariableType.h"
#include "torch/csrc/autograd/FunctionsManual.h"
#include <ATen/RedispatchFunctions.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <ATen/core/TorchDispatchUtils.h>
#include <torch/library.h>
#include <ATen/SparseCsrTensorUtils.h>
"""

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"][^>"]+[>"]\s*$', re.MULTILINE)


class Templates:
    """torchgen's Functions.cpp and VariableType.cpp templates: beside the yaml, else built in."""

    def __init__(self, derivatives: Path | None) -> None:
        folder = derivatives.parent / "templates" if derivatives is not None else None
        self.functions_cpp = _read(folder, "Functions.cpp") or FALLBACK_FUNCTIONS_CPP
        variable_type = _read(folder, "VariableType.cpp")
        self.variable_type_includes = (
            "\n".join(_INCLUDE.findall(variable_type)) if variable_type else FALLBACK_VARIABLE_TYPE_INCLUDES
        )

    def pch_header(self) -> str:
        """Every header either generated file includes: one precompiled header serves both."""
        lines = _INCLUDE.findall(self.functions_cpp) + self.variable_type_includes.splitlines()
        return "#pragma once\n" + "\n".join(dict.fromkeys(line.strip() for line in lines if line.strip())) + "\n"


def _read(folder: Path | None, name: str) -> str | None:
    if folder is None:
        return None
    try:
        return (folder / name).read_text(encoding="utf-8")
    except OSError:
        return None
