"""derivls's codegen against torchgen's, byte for byte, on the real 2.13 files.

Runs torchgen's own ``process_function`` (no stored golden) over every autograd node of
torchgen's infos, and compares its FUNCTION_DECLARATION / FUNCTION_DEFINITION text with
what derivls's codegen renders from derivls's own loader's infos.
"""

from __future__ import annotations

import difflib

import pytest

from derivls.codegen import generate_nodes, process_function
from derivls.codegen import templates as T
from derivls.derivatives.loader import load_derivatives

torchgen_functions = pytest.importorskip("torchgen.packaged.autograd.gen_autograd_functions")
torchgen_load = pytest.importorskip("torchgen.packaged.autograd.load_derivatives")

EXPECTED_NODES = 649


@pytest.fixture(scope="module")
def torchgen_infos(real_files):
    infos, _ = torchgen_load.load_derivatives(str(real_files.derivatives), str(real_files.native), str(real_files.tags))
    return infos


@pytest.fixture(scope="module")
def torchgen_list(torchgen_infos):
    return torchgen_functions.get_infos_with_derivatives_list(torchgen_infos)


@pytest.fixture(scope="module")
def derivls_infos(real_files):
    infos, _ = load_derivatives(real_files.derivatives, real_files.native, real_files.tags)
    return infos


def _first_difference(expected: str, got: str, op: str, what: str) -> str:
    diff = difflib.unified_diff(
        expected.splitlines(keepends=True),
        got.splitlines(keepends=True),
        fromfile=f"torchgen/{op}.{what}",
        tofile=f"derivls/{op}.{what}",
        n=2,
    )
    return "".join(list(diff)[:40]) or f"{op}.{what}: differs only in line endings\n"


def test_derivls_infos_are_derivls_objects(derivls_infos):
    from derivls.derivatives.model import DifferentiabilityInfo

    per_key = next(iter(derivls_infos.values()))
    assert all(type(info) is DifferentiabilityInfo for info in per_key.values())


def test_node_count_and_order(torchgen_list, derivls_infos):
    nodes = generate_nodes(derivls_infos)
    assert len(torchgen_list) == EXPECTED_NODES
    assert [n.op for n in nodes] == [info.op for info in torchgen_list]


@pytest.mark.parametrize("what", ["declaration", "definition"])
def test_byte_for_byte(torchgen_list, derivls_infos, what):
    template = {
        "declaration": torchgen_functions.FUNCTION_DECLARATION,
        "definition": torchgen_functions.FUNCTION_DEFINITION,
    }[what]
    nodes = generate_nodes(derivls_infos)
    assert len(nodes) == len(torchgen_list) == EXPECTED_NODES
    mismatches = []
    for info, node in zip(torchgen_list, nodes):
        expected = torchgen_functions.process_function(info, template)
        got = getattr(node, what)
        if expected != got:
            mismatches.append(_first_difference(expected, got, info.op, what))
    assert not mismatches, f"{len(mismatches)}/{len(nodes)} {what}s differ; first ones:\n" + "\n".join(mismatches[:3])


@pytest.mark.parametrize("name", ["PY_FUNCTION_DEFINITION", "PY_FUNCTION_PROPS_AND_GETTERS"])
def test_python_binding_templates(torchgen_list, derivls_infos, name):
    # Not part of Functions.h/.cpp, but process_function builds the getters for every
    # saved attribute anyway: check python_functions.cpp's pieces as well.
    from derivls.codegen import infos_with_derivatives_list

    theirs = getattr(torchgen_functions, name)
    ours = getattr(T, name)
    mismatches = []
    for expected_info, info in zip(torchgen_list, infos_with_derivatives_list(derivls_infos), strict=True):
        expected = torchgen_functions.process_function(expected_info, theirs)
        got = process_function(info, ours)
        if expected != got:
            mismatches.append(_first_difference(expected, got, info.op, name))
    assert not mismatches, f"{len(mismatches)} nodes differ; first ones:\n" + "\n".join(mismatches[:3])
