"""Codes of the set-up: what derivls needs beside derivatives.yaml (native_functions.yaml, C++ sources)."""

from __future__ import annotations

from derivls.codes.model import TORCHGEN, Severity, Stage, declare

SETUP = Stage.SETUP

NATIVE_NOT_FOUND = declare(
    "native-not-found",
    Severity.WARNING,
    SETUP,
    "no native_functions.yaml found: entries are not checked against it",
    what="""derivls found no native_functions.yaml (next to derivatives.yaml in a checkout or a torch wheel's
    torchgen/packaged, nor by --native or the `derivls.nativeFunctions` setting): only the YAML shape is
    checked.""",
    why="""Not a build error: without the functions' schemas derivls cannot judge the entries.""",
    wrong="(a derivatives.yaml copied alone into an empty folder)",
    right="(derivls check --native path/to/native_functions.yaml derivatives.yaml)",
    fix="Point --native (CLI) or the `derivls.nativeFunctions` setting at a native_functions.yaml.",
    example=None,
    tested_by="tests/unit/test_cli.py",
)

NATIVE_UNREADABLE = declare(
    "native-unreadable",
    Severity.ERROR,
    SETUP,
    "native_functions.yaml (or tags.yaml) cannot be read or indexed",
    what="""The native_functions.yaml derivls uses cannot be read or indexed (not YAML, a broken entry,
    unreadable, or more than 30,000 entries — the real files have about 2,600: a bound on the work a hostile
    file can cause), or its tags.yaml cannot (not text, not YAML, empty or only comments, a tag without a
    description); nothing is checked against it. One error, on the first line.""",
    why="""torchgen would fail on the same file before reading derivatives.yaml (on an empty tags.yaml:
    `Expected 'es' to be a list, but got <class 'NoneType'>`).""",
    wrong="(a native_functions.yaml with a syntax error)",
    right="(a native_functions.yaml that torchgen reads)",
    fix="""Fix the file, or point --native or the `derivls.nativeFunctions` setting at another one (--tags or
    `derivls.tags` for tags.yaml).""",
    example=None,
    tested_by="tests/unit/test_cli.py",
)

NATIVE_FUNCTIONS_LEFT_OUT = declare(
    "native-functions-left-out",
    Severity.WARNING,
    SETUP,
    "functions of native_functions.yaml the release's rules left out",
    what="""Some functions of native_functions.yaml use what the selected release's rules do not know; they are
    left out of the index, and entries for them are not checked. The warning lists them.""",
    why="""Not a build error: usually derivls follows another release than the files'.""",
    wrong="(a native_functions.yaml newer than the selected release)",
    right="(the matching release: --torch-version or the `torchVersion` setting)",
    fix="Pick the matching release with --torch-version or the `torchVersion` setting.",
    example=None,
    tested_by="tests/lsp/test_torch_version.py",
)

NATIVE_INDEX = declare(
    "native-index",
    Severity.ERROR,
    SETUP,
    "the editor's native_functions.yaml cannot be indexed (shown on that file)",
    what="""Shown on an open native_functions.yaml: derivls cannot index it, at the line given.""",
    why="""torchgen fails on the same file.""",
    wrong="(a native_functions.yaml with a broken `func:`)",
    right="(a native_functions.yaml that torchgen reads)",
    example=None,
    tested_by="tests/lsp/test_serving.py",
)

FORMULA_SOURCES_MISSING = declare(
    "formula-sources-missing",
    Severity.INFORMATION,
    SETUP,
    "FunctionsManual.h or the Tensor headers were not found: some names are not checked",
    what="""derivls did not find the C++ sources it reads for the names formulas use (FunctionsManual.h, the
    Tensor method headers) beside native_functions.yaml; the formula checks that need them are skipped.""",
    why="""Not a build error: a notice that the formula checks are partial.""",
    wrong="(a native_functions.yaml without a PyTorch checkout or torch wheel around it)",
    right="(native_functions.yaml of a checkout or of the torch wheel's torchgen/packaged)",
    fix="""Check the files where they stand (a checkout, or a torch wheel's site-packages with torch/ beside
    torchgen/), or give the headers of the matching torch: `derivls check --torch-include DIR` (DIR: its
    `torch/include`). `check`'s summary line warns while the names go unchecked.""",
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/lsp/test_entrycache_server.py",
)
