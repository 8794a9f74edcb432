"""native_functions.yaml as torchgen sees it, without torch: the function list, view groups
and lookup tables that torchgen's autograd loader builds.

``NativeIndex.functions`` equals ``torchgen.gen.parse_native_yaml(...).native_functions``
(same schemas, same order, including the functions torchgen generates: out= / functional
variants, ``autogen:`` ones); ``loader_functions`` is the order
``torchgen/packaged/autograd/load_derivatives.py`` iterates (view groups flattened).

Speed: PyYAML, even with libyaml, spends ~0.35 s on the 16k-line file; native_functions.yaml
only uses a tiny, regular YAML subset, so a line scanner reads it (``yamlsubset.scan_native_entries``) and
anything outside that subset falls back to PyYAML for the whole file (derivls.yamlsubset).

torchgen's backend/dispatch validation is out of scope; only what the function list, the
view groups and the C++ signatures need is parsed (dispatch keys are kept for hovers).

The modules: native_model.py (NativeFunction, view groups), native_entry.py (an entry of the
file → a NativeFunction), native_generated.py (generated functions, view grouping), and here the
index over them.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path

from derivls.aten.native_entry import _from_entry, _parse_tags, _problem, _read_entries, _yaml_entries, locate
from derivls.aten.native_generated import add_generated_native_functions, get_grouped_by_view_native_functions
from derivls.aten.native_model import (
    Location,
    NativeFunction,
    NativeFunctionsViewGroup,
    NativeIndexError,
    Variant,
    ViewSchemaKind,
    get_view_copy_name,
    gets_generated_view_copy,
)
from derivls.aten.native_rules import NEWEST, NativeProblem, NativeRules, UnknownToRules
from derivls.aten.native_validate import EntryRejected, validate_functions
from derivls.aten.schema import FunctionSchema
from derivls.aten.sharing import sharing
from derivls.base.gcpolicy import paused_gc
from derivls.base.limits import MAX_NATIVE_ENTRIES, read_regular_file
from derivls.codes.native import NATIVE_DUPLICATE, NATIVE_GENERATED, NATIVE_TAG_RULE, NATIVE_VIEW_GROUP, NATIVE_YAML
from derivls.yamlsubset import ScannedEntry as _Entry

__all__ = [
    "Location",
    "NativeFunction",
    "NativeFunctionsViewGroup",
    "NativeIndex",
    "NativeIndexError",
    "Variant",
    "ViewSchemaKind",
    "gets_generated_view_copy",
    "get_view_copy_name",
]


def _generate_and_group(
    rs: list[NativeFunction], problems: list[NativeProblem], lines: list[str]
) -> tuple[list[NativeFunction], list[NativeFunction | NativeFunctionsViewGroup]]:
    """Generated functions and view groups. A function torchgen's generation or view grouping rejects
    is left out with a problem on its `func:`, and the rest are generated and grouped again (a function
    whose group no longer holds together because a variant of it was left out is left out the same way)."""
    while True:
        attempt = list(rs)
        try:
            add_generated_native_functions(attempt)
            if problems:  # a variant torchgen would generate must not stand in for a left-out one
                left_out_names = {p.name for p in problems if p.left_out}
                attempt = [f for f in attempt if not (f.is_generated and str(f.func.name) in left_out_names)]
            return attempt, get_grouped_by_view_native_functions(attempt)
        except NativeIndexError as e:
            culprit = next((f for f in rs if e.line is not None and f.source_line == e.line), None)
            if culprit is None:
                raise
            left_out = {_base_name(p.name) for p in problems if p.name and p.left_out}
            rs = [f for f in rs if f is not culprit]
            message = e.message
            base = _base_name(str(culprit.func.name))
            unknown = base in left_out
            # a group broken by a function reported here is not reported again on its other functions
            consequence = base in {_base_name(p.name) for p in problems if p.name and p.left_out and not p.unknown}
            if unknown:
                message += " (a variant of it was left out)"
            line = e.line or 0
            problems.append(
                NativeProblem(
                    culprit.path,
                    line,
                    message,
                    str(culprit.func),
                    str(culprit.func.name),
                    code=NATIVE_GENERATED if unknown else _generation_code(e.message),
                    column=culprit.func_column or 0,
                    end_column=len(lines[line - 1].rstrip()) if 0 < line <= len(lines) else None,
                    unknown=unknown,
                    reported=not consequence,
                )
            )


def _generation_code(message: str) -> str:
    if message.startswith("duplicate schema kind"):
        return NATIVE_DUPLICATE
    if message.startswith("inplace_view tag missing"):
        return NATIVE_TAG_RULE
    if "view" in message.split(":")[0] or "view_copy" in message or "have the same view signature" in message:
        return NATIVE_VIEW_GROUP
    return NATIVE_GENERATED


def _one_per_line(problems: tuple[NativeProblem, ...]) -> tuple[NativeProblem, ...]:
    """One problem per line (torchgen stops at the first; a later pass may find the same function again)."""
    seen: set[tuple[str, int]] = set()
    out = []
    for p in problems:
        if (p.path, p.line) not in seen:
            seen.add((p.path, p.line))
            out.append(p)
    return tuple(out)


def _entry_end(entries: Sequence[_Entry], line: int, last: int) -> int:
    """The last line of the entry whose first key is on `line`."""
    lo, hi = 0, len(entries)
    while lo < hi:
        mid = (lo + hi) // 2
        if entries[mid].line <= line:
            lo = mid + 1
        else:
            hi = mid
    return entries[lo].line - 1 if lo < len(entries) else last


def _problem_at(f: NativeFunction, e: EntryRejected, lines: list[str], line: int, end_line: int) -> NativeProblem:
    key_line = line
    if e.key and e.key != "func":
        for ln in range(line, min(end_line, len(lines)) + 1):
            if lines[ln - 1].lstrip(" -").startswith(e.key + ":"):
                key_line = ln
                break
    ln, column, end = locate(lines, key_line, end_line, e.key, e.token)
    return NativeProblem(
        f.path, ln, e.message, str(f.func), str(f.func.name), code=e.code, column=column, end_column=end,
        left_out=False, fix=e.fix,
    )  # fmt: skip


def _duplicate_key(ent: _Entry, path: str, key: str, line: int, lines: list[str]) -> NativeProblem:
    schema = ent.data.get("func")
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    column = max(text.find(key), 0)
    return NativeProblem(
        path,
        line,
        f"found a duplicate key in the yaml: '{key}' (torchgen's YAML loader rejects it)",
        schema if isinstance(schema, str) else None,
        None,
        code=NATIVE_YAML,
        column=column,
        end_column=column + len(key),
        left_out=False,
    )


def _base_name(name: str | None) -> str:
    base = (name or "").split(".")[0].rstrip("_")
    return base.removesuffix("_copy")


# --------------------------------------------------------------------------------------
# The index
# --------------------------------------------------------------------------------------


class NativeIndex:
    """Everything derivls needs from native_functions.yaml.

    functions         torchgen's parse_native_yaml(...).native_functions, same order
    loader_functions  load_derivatives' order (view groups flattened, include_copy=True)
    view_groups       the NativeFunctionsViewGroups
    by_schema         str(f.func) -> f          (load_derivatives' functions_by_schema)
    by_signature      f.func.signature() -> fs  (load_derivatives' functions_by_signature)
    by_name           str(f.func.name) -> f     ("add.Tensor" -> f)
    """

    def __init__(
        self,
        functions: list[NativeFunction],
        grouped: list[NativeFunction | NativeFunctionsViewGroup],
        *,
        path: str,
        tags: frozenset[str] | None,
        legacy: bool,
        problems: Sequence[NativeProblem] = (),
        rules: NativeRules = NEWEST,
    ) -> None:
        self.path = path
        self.tags = tags
        self.legacy = legacy
        self.rules = rules  # the release whose rules read it (see native_rules)
        # functions left out because they use something the rules don't know (see native_rules)
        self.problems: tuple[NativeProblem, ...] = tuple(p for p in problems if p.left_out)
        # everything torchgen rejects, in file order (left out or not: see native_report)
        self.rejected: tuple[NativeProblem, ...] = tuple(p for p in problems if p.reported)
        self.unknown_by_schema: dict[str, NativeProblem] = {p.schema: p for p in self.problems if p.schema}
        self.unknown_by_name: dict[str, NativeProblem] = {p.name: p for p in self.problems if p.name}
        self.functions: list[NativeFunction] = functions
        self.grouped = grouped
        self.loader_functions: list[NativeFunction] = [
            x for g in grouped for x in ([g] if isinstance(g, NativeFunction) else g.functions(include_copy=True))
        ]
        self.view_groups: list[NativeFunctionsViewGroup] = [
            g for g in grouped if isinstance(g, NativeFunctionsViewGroup)
        ]
        self.by_schema: dict[str, NativeFunction] = {}
        self.by_signature: dict[FunctionSchema, list[NativeFunction]] = defaultdict(list)
        self.by_name: dict[str, NativeFunction] = {}
        duplicates: list[NativeProblem] = []
        for f in self.loader_functions:
            s = str(f.func)
            prev = self.by_schema.get(s)
            if prev is not None:
                duplicates.append(
                    NativeProblem(
                        f.path,
                        f.source_line or 0,
                        f"duplicate function schema: {s} (also at line {prev.source_line})",
                        s,
                        str(f.func.name),
                        code=NATIVE_DUPLICATE,
                        column=f.func_column or 0,
                        left_out=False,
                    )
                )
                continue
            self.by_schema[s] = f
            self.by_signature[f.func.signature()].append(f)
            self.by_name.setdefault(str(f.func.name), f)
        if duplicates:
            self.rejected = tuple(sorted((*self.rejected, *duplicates), key=lambda p: (p.path != path, p.line)))
        self.rejected = _one_per_line(self.rejected)

    def __len__(self) -> int:
        return len(self.functions)

    def __iter__(self) -> Iterator[NativeFunction]:
        return iter(self.functions)

    def line_of(self, schema_str: str) -> int | None:
        """1-based line of the `func:` of a written function; None if unknown or generated."""
        f = self.by_schema.get(schema_str)
        return None if f is None else f.line

    @staticmethod
    def load(
        native_path: str | os.PathLike[str],
        tags_path: str | os.PathLike[str] | None = None,
        *,
        legacy: bool | None = None,
        rules: NativeRules = NEWEST,
    ) -> NativeIndex:
        """Read native_functions.yaml (and tags.yaml: given, else the sibling file if any).

        legacy=None: legacy (2021-era) mode iff there is no tags.yaml. Legacy mode accepts
        the 2021 grammar and, like that era's torchgen, generates no functions and has no
        view groups."""
        native_path = os.fspath(native_path)
        try:
            text = read_regular_file(native_path, "native functions file")
        except (OSError, UnicodeDecodeError) as e:
            raise NativeIndexError(f"cannot read native functions file: {e}", path=native_path) from None
        tags_text: str | None = None
        tags_file: str | None = None
        if tags_path is None:
            sibling = Path(native_path).with_name("tags.yaml")
            if sibling.is_file():
                tags_path = sibling
        if tags_path is not None:
            tags_file = os.fspath(tags_path)
            try:
                tags_text = read_regular_file(tags_file, "tags file")
            except (OSError, UnicodeDecodeError) as e:
                raise NativeIndexError(f"cannot read tags file: {e}", path=tags_file) from None
        return NativeIndex.from_text(
            text, tags_text, path=native_path, tags_path=tags_file or "tags.yaml", legacy=legacy, rules=rules
        )

    @staticmethod
    def from_text(
        native_text: str,
        tags_text: str | None = None,
        path: str = "native_functions.yaml",
        *,
        tags_path: str = "tags.yaml",
        legacy: bool | None = None,
        rules: NativeRules = NEWEST,
    ) -> NativeIndex:
        """Build from text (e.g. an unsaved editor buffer). See load() for `legacy`; `rules`: which
        release's native_functions.yaml (functions using what they don't know are left out)."""
        # The load allocates ~100k small objects and no cycles: pausing the cyclic GC
        # meanwhile saves a third of the time.
        with paused_gc(), sharing():  # equal strings made while building are one object (aten/sharing.py)
            return NativeIndex._from_text(native_text, tags_text, path, tags_path, legacy, rules)

    @staticmethod
    def _from_text(
        native_text: str,
        tags_text: str | None,
        path: str,
        tags_path: str,
        legacy: bool | None,
        rules: NativeRules = NEWEST,
    ) -> NativeIndex:
        # counted before anything is parsed: an entry starts a line with "-" (an upper bound: "---" too)
        if native_text.count("\n-") + native_text.startswith("-") > MAX_NATIVE_ENTRIES:
            raise NativeIndexError(
                f"more than {MAX_NATIVE_ENTRIES:,} entries (the real file has about 2,600): not read",
                path=path,
            )
        if legacy is None:
            legacy = tags_text is None
        valid_tags: set[str] | None = None
        problems: list[NativeProblem] = []
        if tags_text is not None:
            valid_tags = _parse_tags(tags_text, tags_path or "tags.yaml", None if legacy else problems)
        entries = _read_entries(native_text, path)
        lines = native_text.split("\n")
        rs: list[NativeFunction] = []
        for i, ent in enumerate(entries):
            end_line = entries[i + 1].line - 1 if i + 1 < len(entries) else len(lines)
            for key, dup_line in ent.duplicate_keys:
                problems.append(_duplicate_key(ent, path, key, dup_line, lines))
            try:
                rs.append(_from_entry(ent, valid_tags, path, legacy, rules))
            except UnknownToRules as e:  # costs this function only
                problems.append(_problem(ent, path, e, lines, end_line))
            except EntryRejected as e:  # torchgen rejects it: this entry's diagnostic, the rest go on
                if legacy:
                    raise
                problems.append(_problem(ent, path, e, lines, end_line))
        if legacy:
            # 2021-era torchgen generated nothing and had no view groups
            grouped: list[NativeFunction | NativeFunctionsViewGroup] = list(rs)
        else:
            left_out_names = {p.name for p in problems if p.name and p.left_out}
            for f, rejected in validate_functions(rs, rules.python_keywords):
                if f.structured_delegate is not None and str(f.structured_delegate) in left_out_names:
                    continue  # its delegate is left out: that one's problem says why
                line = f.source_line or 0
                problems.append(_problem_at(f, rejected, lines, line, _entry_end(entries, line, len(lines))))
            try:
                rs, grouped = _generate_and_group(rs, problems, lines)
            except NativeIndexError:
                raise
            except ValueError as e:  # e.g. kind() of a schema both out= and inplace
                raise NativeIndexError(str(e), path=path) from None
            problems.sort(key=lambda p: (p.path != path, p.line, p.column))
        return NativeIndex(
            rs,
            grouped,
            path=path,
            tags=frozenset(valid_tags) if valid_tags is not None else None,
            legacy=legacy,
            problems=problems,
            rules=rules,
        )


# for tests that compare the subset reader with PyYAML
__all__ += ["_parse_tags", "_yaml_entries"]  # noqa: PLE0605
