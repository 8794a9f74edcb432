"""The candidate fixes between two releases: each derivatives.yaml entry whose formulas differ.

A formula a later release changed may have fixed the earlier one (its gradcheck then fails in the earlier torch),
or only written it another way, or given an entry a formula it lacked. This lists them; the verdicts are
tests/gradcheck/test_release_candidates.py's and docs/gradcheck.md's ("Releases check each other").

An entry is known by its function's name and overload (`clamp_min.Tensor`): its arguments may be renamed between
releases (`_pdist_backward`'s `grad` became `grad_output` in 2.14) and stay the same entry. Its formulas are every
key but `name` (the derivative of an input or of several, `result`'s forward formula, `output_differentiability`,
a `dispatch:` section's keys as `Key/input`), each with its whitespace normalised. YAML comments are not formulas.

    python -m tests.releases.candidates 2.13.0 2.14.1 [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

CHANGED, NEW, REMOVED = (
    "changed",
    "new",
    "removed",
)  # an entry in both whose formulas differ / only later / only earlier


def normalised(text: object) -> str:
    """A formula with each run of whitespace made one space (a list, `output_differentiability`'s, as written)."""
    if isinstance(text, list):
        return "[" + ", ".join(normalised(item) for item in text) + "]"
    return " ".join(str(text).split())


def entry_name(schema: str) -> str:
    """`clamp_min.Tensor(Tensor self, Tensor min) -> Tensor` -> `clamp_min.Tensor`."""
    return schema.split("(", 1)[0].strip()


def formulas_of(entry: dict) -> dict[str, str]:
    """An entry's formulas by key (`self`, `result`, `grad_output, self, pdist`, `AutogradNestedTensor/self`)."""
    found: dict[str, str] = {}
    for key, value in entry.items():
        if key == "name":
            continue
        if key == "dispatch" and isinstance(value, dict):
            for dispatch_key, section in value.items():
                for name, formula in (section or {}).items():
                    found[f"{dispatch_key}/{name}"] = normalised(formula)
            continue
        found[str(key)] = normalised(value)
    return found


@dataclass(frozen=True)
class Entry:
    name: str  # `clamp_min.Tensor`
    schema: str  # the whole `name:` text, whitespace normalised
    formulas: dict[str, str]


def read_entries(text: str) -> dict[str, Entry]:
    """The entries of a derivatives.yaml text by name (ValueError: a name twice, or not a list of entries)."""
    document = yaml.safe_load(text)
    if not isinstance(document, list):
        raise ValueError("derivatives.yaml is not a list of entries")
    entries: dict[str, Entry] = {}
    for item in document:
        if not isinstance(item, dict) or "name" not in item:
            raise ValueError(f"an entry without a name: {item!r}")
        schema = normalised(item["name"])
        name = entry_name(schema)
        if name in entries:
            raise ValueError(f"two entries are named {name}")
        entries[name] = Entry(name, schema, formulas_of(item))
    return entries


@dataclass(frozen=True)
class Candidate:
    name: str
    kind: str  # CHANGED, NEW or REMOVED
    earlier: Entry | None
    later: Entry | None

    @property
    def changed_keys(self) -> tuple[str, ...]:
        """The keys in both whose formulas differ."""
        if self.earlier is None or self.later is None:
            return ()
        before, after = self.earlier.formulas, self.later.formulas
        return tuple(k for k in after if k in before and before[k] != after[k])

    @property
    def added_keys(self) -> tuple[str, ...]:
        before = self.earlier.formulas if self.earlier else {}
        return tuple(k for k in (self.later.formulas if self.later else {}) if k not in before)

    @property
    def removed_keys(self) -> tuple[str, ...]:
        after = self.later.formulas if self.later else {}
        return tuple(k for k in (self.earlier.formulas if self.earlier else {}) if k not in after)

    @property
    def schema_changed(self) -> bool:
        return self.earlier is not None and self.later is not None and self.earlier.schema != self.later.schema

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "changed": list(self.changed_keys),
            "added": list(self.added_keys),
            "removed": list(self.removed_keys),
            "schema_changed": self.schema_changed,
        }


def candidates(earlier_text: str, later_text: str) -> list[Candidate]:
    """Every entry whose formulas differ between two derivatives.yaml texts (the earlier release's first), in the
    later file's order, then the entries the later one dropped in the earlier file's order. An entry whose schema
    changed (arguments added or renamed) but whose formulas did not is not a candidate."""
    before, after = read_entries(earlier_text), read_entries(later_text)
    found = []
    for name, entry in after.items():
        old = before.get(name)
        if old is None:
            found.append(Candidate(name, NEW, None, entry))
        elif old.formulas != entry.formulas:
            found.append(Candidate(name, CHANGED, old, entry))
    found += [Candidate(name, REMOVED, entry, None) for name, entry in before.items() if name not in after]
    return found


# helpers a later release added, each with the earlier releases' Tensor method doing the same (graft)
BACKPORTS = {
    # 2.14: masked_fill_ where in-place masking is safe, masked_fill elsewhere: the same values
    "masked_fill_inplace_if_safe": "masked_fill",
}


def entry_blocks(text: str) -> dict[str, tuple[int, int]]:
    """Each entry's lines in a derivatives.yaml text by name: [first, end) line indices, from its `- name:` line to
    its last formula line (the comments and blank lines before the next entry are not its)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("- name:")]
    blocks = {}
    for start, following in zip(starts, starts[1:] + [len(lines)]):
        end = following
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        blocks[entry_name(lines[start][len("- name:") :].strip().strip("\"'"))] = (start, end)
    return blocks


def backported(formula: str, backports: dict[str, str] = BACKPORTS) -> str:
    """`masked_fill_inplace_if_safe(a, m, 0)` -> `(a).masked_fill(m, 0)`: each backported helper's call made the
    earlier release's method call on its first argument (nested calls too)."""
    for helper, method in backports.items():
        while (at := _call_at(formula, helper)) is not None:
            open_paren = at + len(helper)
            close, comma = _matching(formula, open_paren)
            first, rest = formula[open_paren + 1 : comma].strip(), formula[comma + 1 : close].strip()
            formula = f"{formula[:at]}({backported(first, backports)}).{method}({rest}){formula[close + 1 :]}"
    return formula


def _call_at(text: str, name: str) -> int | None:
    start = 0
    while (at := text.find(name + "(", start)) >= 0:
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_:."):
            return at
        start = at + 1
    return None


def _matching(text: str, open_paren: int) -> tuple[int, int]:
    """The index of the parenthesis closing text[open_paren] and of the first comma at its depth."""
    depth, comma = 0, -1
    for i in range(open_paren, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i, comma if comma >= 0 else i
        elif text[i] == "," and depth == 1 and comma < 0:
            comma = i
    raise ValueError(f"unbalanced parentheses in {text!r}")


def graft(earlier_text: str, later_text: str, names: list[str], backports: dict[str, str] = BACKPORTS) -> str:
    """The earlier derivatives.yaml text with the entries `names` as the later text has them (each helper of
    `backports` rewritten as the earlier release's method): the later formulas, to be checked with the earlier torch.
    Every other line is the earlier file's. ValueError: a name not in both."""
    before, after = entry_blocks(earlier_text), entry_blocks(later_text)
    lines, later = earlier_text.splitlines(), later_text.splitlines()
    missing = [n for n in names if n not in before or n not in after]
    if missing:
        raise ValueError(f"not an entry of both files: {', '.join(missing)}")
    for name in sorted(names, key=lambda n: before[n][0], reverse=True):  # (from the end: the indices hold)
        start, end = before[name]
        lines[start:end] = [backported(line, backports) for line in later[slice(*after[name])]]
    return "\n".join(lines) + "\n"


def release_derivatives(version: str) -> Path:
    """A release's packaged derivatives.yaml (the release cache's, fetched as tests/releases fetches them)."""
    from tests.releases import fetch

    return fetch.ensure(version) / "torchgen" / "packaged" / "autograd" / "derivatives.yaml"


def release_candidates(earlier: str, later: str) -> list[Candidate]:
    return candidates(
        release_derivatives(earlier).read_text(encoding="utf-8"), release_derivatives(later).read_text(encoding="utf-8")
    )


def describe(candidate: Candidate) -> str:
    """One line: kind, name, then what changed (`changed self, result; added result; schema changed`)."""
    parts = []
    if candidate.changed_keys:
        parts.append("changed " + ", ".join(candidate.changed_keys))
    if candidate.kind == CHANGED and candidate.added_keys:
        parts.append("added " + ", ".join(candidate.added_keys))
    if candidate.kind == CHANGED and candidate.removed_keys:
        parts.append("removed " + ", ".join(candidate.removed_keys))
    if candidate.schema_changed:
        parts.append("schema changed")
    return f"{candidate.kind:8} {candidate.name}" + (f"  {'; '.join(parts)}" if parts else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.releases.candidates", description=__doc__.split("\n")[0])
    parser.add_argument("earlier")
    parser.add_argument("later")
    parser.add_argument("--json", action="store_true", help="one JSON list instead of lines")
    args = parser.parse_args(argv)
    found = release_candidates(args.earlier, args.later)
    if args.json:
        print(json.dumps([c.to_json() for c in found], indent=1))
    else:
        for candidate in found:
            print(describe(candidate))
    return 0


if __name__ == "__main__":
    sys.exit(main())
