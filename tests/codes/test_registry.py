"""The registry of diagnostic codes: each declared once, emitted only as a registered Code, documented,
and shown by its own examples (each `wrong` snippet reports exactly its code, each `right` one nothing)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from derivls import codes
from derivls.aten.native import NativeIndex
from derivls.base.diagnostics import FIRST_LINE, Diagnostic, error
from derivls.codes import Code, Severity, Stage, all_codes, lookup
from derivls.codes.model import declare
from derivls.derivatives.loader import DocumentAnalyzer

ROOT = Path(__file__).resolve().parents[2]
# Codes whose check no derivatives.yaml edit has been found to reach yet (torchgen's assert is ported
# for parity); every other code is emitted by its example or by the test named in its tested_by.
NOT_YET_EMITTED = {"codegen-inplace-forward-count", "codegen-forward-output-type"}
RUNNABLE = [c for c in all_codes() if c.example is not None]
BY_TEST = [c for c in all_codes() if c.example is None and c not in NOT_YET_EMITTED]
# What a wrong example reports besides its code, where the loader cannot tell one without the other.
ALSO = {"entry-not-mapping": {"missing-name"}}


def test_a_diagnostic_refuses_a_code_that_is_not_registered():
    with pytest.raises(TypeError, match="not a registered Code"):
        Diagnostic(FIRST_LINE, Severity.ERROR, "made-up", "message")  # type: ignore[arg-type]


def test_a_code_is_declared_once():
    with pytest.raises(ValueError, match="declared twice"):
        declare("overlap", Severity.ERROR, Stage.LOADER, "again", what=".", why=".", wrong=".", right=".")


def test_a_code_pickles_as_the_registered_object():
    import pickle

    code = lookup("schema-not-found")
    assert pickle.loads(pickle.dumps(error(FIRST_LINE, code, "m"))).code is code


def test_every_code_has_a_summary_a_doc_and_examples():
    for code in all_codes():
        assert code.summary and code.what and code.why and code.wrong and code.right, code
        assert code.profiles and set(code.profiles) <= {codes.TORCHGEN, codes.LEGACY}, code


def _code_names_in_source() -> set[str]:
    """Every string literal of derivls shaped like a code that some call passes where a code goes: the
    registered names must cover them (a second line of defence beside Diagnostic's type check)."""
    found = set()
    for path in (ROOT / "derivls").rglob("*.py"):
        if "codes" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "code" and isinstance(node.value, ast.Constant):
                found.add(node.value.value)
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                "error",
                "warning",
                "emit",
                "Diagnostic",
                "Finding",
                "Slip",
                "SavedVariableError",
            ):
                for arg in node.args:
                    if (
                        isinstance(arg, ast.Constant)
                        and isinstance(arg.value, str)
                        and re.fullmatch(r"[a-z0-9-]+", arg.value)
                    ):
                        found.add(arg.value)
    return found


def test_no_code_is_spelled_as_a_string_where_a_diagnostic_is_made():
    assert _code_names_in_source() == set()


def test_codes_emitted_only_through_tests_name_a_test_that_mentions_them():
    for code in BY_TEST:
        path = ROOT / code.tested_by
        assert path.is_file(), (code, code.tested_by)
        assert str(code) in path.read_text(encoding="utf-8"), (code, code.tested_by)


@pytest.fixture(scope="module")
def torchgen_index(real_files) -> NativeIndex:
    return NativeIndex.load(str(real_files.native), str(real_files.tags))


@pytest.fixture(scope="module")
def legacy_index(legacy_dir) -> NativeIndex:
    native = legacy_dir / "native_functions.yaml"
    return NativeIndex.from_text(native.read_text(encoding="utf-8"), None, str(native), legacy=True)


def _reported(code: Code, text: str, torchgen_index: NativeIndex, legacy_index: NativeIndex) -> set[str]:
    index = torchgen_index if code.example == codes.TORCHGEN else legacy_index
    if code.native:  # the release's functions and the example's own
        native = Path(index.path).read_text(encoding="utf-8") + "\n" + code.native
        tags = Path(index.path).with_name("tags.yaml")
        legacy = code.example == codes.LEGACY
        tags_text = None if legacy else tags.read_text(encoding="utf-8")
        index = NativeIndex.from_text(native, tags_text, index.path, legacy=legacy)
    analysis = DocumentAnalyzer(index, index.path, code.example or codes.TORCHGEN).analyse(text)
    return {d.code for d in analysis.diagnostics if d.severity <= Severity.WARNING}


@pytest.mark.parametrize("code", RUNNABLE, ids=str)
def test_the_wrong_example_reports_exactly_its_code_and_the_right_one_nothing(code, torchgen_index, legacy_index):
    assert _reported(code, code.wrong, torchgen_index, legacy_index) == {code} | ALSO.get(code, set())
    assert _reported(code, code.right, torchgen_index, legacy_index) == set()


def test_a_function_the_index_holds_but_not_under_its_signature_is_legacy_signature_not_found(torchgen_index):
    """An inconsistent index (no release's rules make one today): the loader says so instead of failing."""
    import copy

    index = copy.copy(torchgen_index)
    index.by_signature = {}
    analysis = DocumentAnalyzer(index, index.path).analyse("- name: abs(Tensor self) -> Tensor\n  self: grad\n")
    assert [d.code for d in analysis.diagnostics] == ["legacy-signature-not-found"]
