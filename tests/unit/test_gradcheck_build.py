"""How a gradcheck extension reaches libtorch_cpu's symbols that the library does not export
(derivls.gradcheck.build.helper_stubs), without a compiler or torch: a function gets a jump stub, a
pointer-size data symbol a copy made at load time, anything else is reported not reachable."""

from __future__ import annotations

from pathlib import Path

import pytest

from derivls.gradcheck import build
from derivls.gradcheck.build import Symbol

HELPER = "_ZN5torch8autograd9generated7details9sum_tapesEv"
ZEROS = "_ZN5torch8autograd11TypeAndSize5zerosEv"  # not a FunctionsManual helper, not exported either
MESSAGE = "_ZN5torch8autograd9generated7details23kCudnnDoubleBackwardMsgE"  # extern const char*
TABLE_DATA = "_ZN5torch8autograd9generated7details5tableE"  # data of another size: its type is unknown
NOWHERE = "_ZN5torch8autograd9generated7details7nowhereEv"


@pytest.fixture
def table(monkeypatch):
    symbols = {
        HELPER: Symbol(0x1000, True, 40),
        ZEROS: Symbol(0x2000, True, 300),
        MESSAGE: Symbol(0x3000, False, 8),
        TABLE_DATA: Symbol(0x4000, False, 64),
    }
    monkeypatch.setattr(build, "symbol_table", lambda library, cache=None: symbols)
    monkeypatch.setattr(build.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(build, "demangle", lambda names: names)


def test_every_non_exported_torch_autograd_symbol_is_a_candidate():
    assert ZEROS.startswith(build.HELPER_PREFIX) and HELPER.startswith(build.HELPER_PREFIX)


def test_functions_jump_through_a_slot_filled_from_libtorchs_symbol_table(table):
    text, unreachable, reached = build.helper_stubs([HELPER, ZEROS], Path("libtorch_cpu.so"))
    assert (unreachable, reached) == ([], 2)
    assert f".type {HELPER}, @function" in text and f".type {ZEROS}, @function" in text
    assert "derivls_slot_0 = base ? (void*)(base + 4096UL)" in text
    assert "derivls_slot_1 = base ? (void*)(base + 8192UL)" in text


def test_a_pointer_size_data_symbol_is_copied_at_load_time_not_jumped_to(table):
    text, unreachable, reached = build.helper_stubs([MESSAGE], Path("libtorch_cpu.so"))
    assert (unreachable, reached) == ([], 1)
    assert f".type {MESSAGE}, @object" in text and f".type {MESSAGE}, @function" not in text
    assert f'extern char derivls_data_0[] __asm__("{MESSAGE}");' in text
    assert "std::memcpy(derivls_data_0, (const void*)(base + 12288UL), 8);" in text


def test_other_data_and_symbols_found_nowhere_are_reported_not_reachable(table):
    text, unreachable, reached = build.helper_stubs([TABLE_DATA, NOWHERE], Path("libtorch_cpu.so"))
    assert (sorted(unreachable), reached) == (sorted([TABLE_DATA, NOWHERE]), 0)
    assert f".type {TABLE_DATA}, @object" in text and "memcpy(derivls_data" not in text
    assert f"FunctionsManual helper not reachable: {NOWHERE}" in text
    assert "derivls_slot_0 = (void*)&derivls_unreachable_0;" in text
