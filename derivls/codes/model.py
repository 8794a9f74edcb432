"""What a diagnostic code is: `Code`, its `Severity` and `Stage`, and the registry they are declared in.

A `Code` is a `str` (its name: `d.code == "schema-not-found"` and JSON output keep working) that also
carries everything the registry knows of it: default severity, stage, profiles, a one-line summary and
its user doc. It can only be made by `declare()`, which refuses a second declaration of a name, so a
diagnostic that carries a Code carries a registered one (Diagnostic checks its code's type).
"""

from __future__ import annotations

from enum import Enum, IntEnum


class Severity(IntEnum):
    # Values match LSP's DiagnosticSeverity so the server can pass them through.
    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4

    @property
    def label(self) -> str:
        return self.name.lower()


class Stage(str, Enum):
    """Where in derivls (and in PyTorch's build) a code is found."""

    YAML = "yaml"  # reading derivatives.yaml as YAML: the file's shape
    LOADER = "loader"  # torchgen's load_derivatives (or the 2021 loader)
    FORMULA = "formula"  # a formula's C++ against what the generated code has in scope
    CODEGEN = "codegen"  # torchgen's autograd codegen after load_derivatives
    COMPILE = "compile"  # the C++ compiler on the generated code (`check --compile`)
    SETUP = "setup"  # the workspace: native_functions.yaml, the C++ sources
    GRADCHECK = "gradcheck"  # torch.autograd.gradcheck on the compiled formulas (`derivls gradcheck`)
    NATIVE = "native"  # native_functions.yaml / tags.yaml themselves (torchgen's parse_native_yaml)

    def __str__(self) -> str:
        return self.value


TORCHGEN = "torchgen"
LEGACY = "legacy"
BOTH = (TORCHGEN, LEGACY)

_REGISTRY: dict[str, Code] = {}


class Code(str):
    """A registered diagnostic code (see the module doc). Fields are read-only."""

    severity: Severity
    stage: Stage
    profiles: tuple[str, ...]
    summary: str
    what: str
    why: str
    wrong: str
    right: str
    fix: str
    example: str | None
    native: str
    tested_by: str

    def __new__(cls, name: str) -> Code:  # only declare() makes one
        return str.__new__(cls, name)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"Code {str(self)!r} is read-only")

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (lookup, (str(self),))  # unpickled as the registered object, not a copy

    def __repr__(self) -> str:
        return f"Code({str(self)!r})"

    @property
    def name(self) -> str:
        return str(self)

    @property
    def first_paragraph(self) -> str:
        """What the code means, in one paragraph (hover shows it)."""
        return self.what


def declare(
    name: str,
    severity: Severity,
    stage: Stage,
    summary: str,
    *,
    what: str,
    why: str,
    wrong: str,
    right: str,
    fix: str = "",
    profiles: tuple[str, ...] = BOTH,
    example: str | None = TORCHGEN,
    native: str = "",
    tested_by: str = "",
) -> Code:
    """Declare a code once. `wrong`/`right`: derivatives.yaml text (or a description where the code is not
    about derivatives.yaml). `example`: the profile under which tests run `wrong` (it must report exactly
    this code among its errors and warnings) and `right` (it must report nothing), or None when the code
    cannot be shown by a derivatives.yaml alone; then `tested_by` names the test file that makes derivls
    emit it. `native`: native_functions.yaml text the example needs beside the release's own."""
    if name in _REGISTRY:
        raise ValueError(f"diagnostic code {name!r} is declared twice")
    code = Code(name)
    fields = {
        "severity": severity,
        "stage": stage,
        "profiles": profiles,
        "summary": summary,
        "what": " ".join(what.split()),
        "why": " ".join(why.split()),
        "wrong": wrong.strip("\n"),
        "right": right.strip("\n"),
        "fix": " ".join(fix.split()),
        "example": example,
        "native": native,
        "tested_by": tested_by,
    }
    for key, value in fields.items():
        object.__setattr__(code, key, value)
    _REGISTRY[name] = code
    return code


def lookup(name: str) -> Code:
    """The registered code `name` (KeyError if there is none)."""
    from derivls import codes  # noqa: F401  (the catalogs declare every code on import)

    return _REGISTRY[name]


def all_codes() -> list[Code]:
    """Every registered code, by stage then name."""
    from derivls import codes  # noqa: F401

    order = list(Stage)
    return sorted(_REGISTRY.values(), key=lambda c: (order.index(c.stage), str(c)))
