"""derivls.yamlsubset reads what it accepts exactly as PyYAML (libyaml) does, and refuses the rest."""

from __future__ import annotations

import contextlib
import random
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import derivls.aten.native as native
from derivls.derivatives.document import _parse_with_pyyaml, parse_chunk, split_entries
from derivls.yamlsubset import Unsupported, compose_entry_chunk, resolve_plain, scan_tags
from tests.conftest import FIXTURES

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_RESOLVER = yaml.resolver.Resolver()


def _pyyaml_tag(value: str) -> str:
    return _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))


def test_resolve_plain_agrees_with_pyyaml() -> None:
    words = [
        "",
        "~",
        "~x",
        "null",
        "Null",
        "NULL",
        "nulL",
        "n",
        "no",
        "No",
        "NO",
        "nO",
        "yes",
        "Yes",
        "y",
        "true",
        "True",
        "TRUE",
        "tRue",
        "false",
        "off",
        "Off",
        "on",
        "ON",
        "oN",
        "other",
        "tensor",
        "found_inf",
        "0",
        "1",
        "-1",
        "+1",
        "01",
        "0o7",
        "0x1F",
        "0b101",
        "1_000",
        "1:30",
        "1.5",
        "-1.5",
        ".5",
        "-.5",
        ".inf",
        "-.inf",
        ".nan",
        ".NaN",
        "1e5",
        "1.0e+5",
        "2001-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43.10 -5",
        "<<",
        "<",
        "=",
        "==",
        "!",
        "&",
        "*",
        "-",
        "+",
        ".",
        "-grad",
        "-(grad)",
        "+x",
        "-1 * grad",
        "2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad",
        "1 - x",
        "0.5",
        "1e",
        "abc",
        "_x",
        "(a)",
        "Default",
        "AutogradNestedTensor",
        "non_differentiable",
        "2 3",
        "12:30:45",
        "1__0",
        "0x",
        "-0b1",
        "3.",
        "1:2:3.5",
        "2001-1-1 1:00:00",
        "2001-01-01T00:00:00Z",
    ]
    rng = random.Random(0)
    alphabet = "0123456789-+_.:xobeEaAfFiInNtTZ ~<=yYsSlLuU(,)*/"
    words += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(20000)]
    for word in words:
        mine = resolve_plain(word)
        if mine is not None:
            assert mine == _pyyaml_tag(word), word


def _same_node(a: object, b: object, path: str = "root") -> None:
    if a is None or b is None:
        assert a is None and b is None, path
        return
    assert (a.id, a.tag) == (b.id, b.tag), path
    for m in ("start_mark", "end_mark"):
        ma, mb = getattr(a, m), getattr(b, m)
        assert (ma.line, ma.column, ma.index) == (mb.line, mb.column, mb.index), (path, m)
    if a.id == "scalar":
        assert a.value == b.value, path
    elif a.id == "sequence":
        assert len(a.value) == len(b.value), path
        for i, (x, y) in enumerate(zip(a.value, b.value)):
            _same_node(x, y, f"{path}[{i}]")
    else:
        assert len(a.value) == len(b.value), path
        for i, ((k1, v1), (k2, v2)) in enumerate(zip(a.value, b.value)):
            _same_node(k1, k2, f"{path}.key{i}")
            _same_node(v1, v2, f"{path}.value{i}")


def _check_chunk(text: str) -> bool:
    """True if the subset read the chunk (and read it as PyYAML does); False if it declined."""
    try:
        mine = compose_entry_chunk(text)
    except Unsupported:
        return False
    theirs = yaml.compose(text, Loader=LOADER)  # must not raise: the subset holds only valid YAML
    _same_node(mine, theirs)
    assert parse_chunk.__wrapped__(text) == _parse_with_pyyaml(text)
    return True


def _derivatives_files(real_files) -> list[Path]:
    return [real_files.derivatives, *sorted(FIXTURES.rglob("derivatives.yaml"))]


def test_every_real_entry_is_read_by_the_subset_as_pyyaml_reads_it(real_files) -> None:
    for path in _derivatives_files(real_files):
        for chunk in split_entries(path.read_text()):
            assert _check_chunk(chunk.text), (path, chunk.start_line)


def test_variations_are_read_as_pyyaml_reads_them_or_declined(real_files) -> None:
    chunks = [c.text for c in split_entries(real_files.derivatives.read_text())]
    pieces = [
        " ",
        "  ",
        "\n",
        "\n  ",
        "#",
        " #",
        ":",
        ": ",
        "'",
        '"',
        "[",
        "]",
        ",",
        "-",
        "- ",
        "{",
        "}",
        "\t",
        "  x: y\n",
        "\n    ",
        "True",
        "no",
        "1",
        "-1",
        ".5",
        "~",
        "null",
        "|",
        ">",
        "&a",
        "*a",
        "!",
        "?",
        "%",
        "@",
        "\\",
        "''",
        '""',
        "\n\n",
        "---",
        "...",
        "0x1",
        "2024-01-01",
        "yes",
        "\r",
        "é",
        "dispatch:\n    Default:\n      self: grad\n",
    ]
    rng = random.Random(1)
    read = 0
    for _ in range(4000):
        text = rng.choice(chunks)
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(text))
            r = rng.random()
            if r < 0.5:
                text = text[:at] + rng.choice(pieces) + text[at:]
            elif r < 0.8:
                text = text[:at] + text[at + rng.randint(1, 5) :]
            else:
                lines = text.split("\n")
                k = rng.randrange(len(lines))
                lines[k] = " " * rng.randint(0, 6) + lines[k].lstrip(" ")
                text = "\n".join(lines)
        read += _check_chunk(text)
    assert read > 1000  # the subset is not trivially declining


def _tags_by_pyyaml(text: str) -> list[str]:
    entries = yaml.load(text, Loader=LOADER) or []
    assert all(isinstance(e, dict) and "tag" in e and e.get("desc") for e in entries)
    return [str(e["tag"]) for e in entries]


def test_tags_read_as_pyyaml_reads_them(real_files) -> None:
    texts = [real_files.tags.read_text(), *(p.read_text() for p in sorted(FIXTURES.rglob("tags.yaml")))]
    for text in texts:
        assert scan_tags(text) == _tags_by_pyyaml(text)
    base = texts[0]
    pieces = [
        " ",
        "  ",
        "\n",
        "\n  ",
        "#",
        " #",
        ":",
        ": ",
        "'",
        '"',
        "[",
        "-",
        "- ",
        "|",
        ">",
        "\n- tag: x\n",
        "\n  desc: y\n",
        "  desc: |\n",
        "\n\n",
        "yes",
        "1",
        "~",
        "\t",
        "\n   ",
        "- tag: a\n  desc: |\n\n",
    ]
    rng = random.Random(2)
    read = 0
    for _ in range(1500):
        text = base
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(text))
            if rng.random() < 0.6:
                text = text[:at] + rng.choice(pieces) + text[at:]
            else:
                text = text[:at] + text[at + rng.randint(1, 8) :]
        try:
            mine = scan_tags(text)
        except Unsupported:
            continue
        assert mine == _tags_by_pyyaml(text)
        read += 1
    assert read > 300


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("- tag: a\n  desc: |\n\n- tag: b\n  desc: x\n", True),  # an empty description
        ("- tag: a\n", True),  # no description
        ("- desc: x\n", True),  # no tag
        ("tag: a\n", True),  # not a list
        ("- tag: a\n  desc: x\n  desc: y\n", True),  # a duplicate key (torchgen's YamlLoader rejects it)
    ],
)
def test_tags_mistakes_are_left_to_pyyaml(text: str, error: bool) -> None:
    with pytest.raises(Unsupported):
        scan_tags(text)
    with pytest.raises(native.NativeIndexError) if error else contextlib.nullcontext():
        native._parse_tags(text, "tags.yaml")


def test_check_of_subset_files_does_not_import_pyyaml() -> None:
    root = FIXTURES / "lsp" / "packaged" / "torchgen" / "packaged"
    script = (
        "import sys, io, contextlib\n"
        "from derivls.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['check', {str(root / 'autograd' / 'derivatives.yaml')!r}])\n"
        "print('yaml' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
