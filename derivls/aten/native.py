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

from derivls.aten.native_entry import _from_entry, _parse_tags, _problem, _read_entries, _yaml_entries
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
from derivls.aten.schema import FunctionSchema
from derivls.aten.sharing import sharing
from derivls.gcpolicy import paused_gc
from derivls.limits import MAX_NATIVE_ENTRIES, read_regular_file

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
    rs: list[NativeFunction], problems: list[NativeProblem]
) -> tuple[list[NativeFunction], list[NativeFunction | NativeFunctionsViewGroup]]:
    """Generated functions and view groups. A function whose group no longer holds together because
    a variant of it was left out (see native_rules) is left out too, with a problem saying so."""
    while True:
        attempt = list(rs)
        try:
            add_generated_native_functions(attempt)
            if problems:  # a variant torchgen would generate must not stand in for a left-out one
                left_out_names = {p.name for p in problems}
                attempt = [f for f in attempt if not (f.is_generated and str(f.func.name) in left_out_names)]
            return attempt, get_grouped_by_view_native_functions(attempt)
        except NativeIndexError as e:
            left_out = {_base_name(p.name) for p in problems if p.name}
            culprit = next((f for f in rs if e.line is not None and f.source_line == e.line), None)
            if culprit is None or _base_name(str(culprit.func.name)) not in left_out:
                raise
            rs = [f for f in rs if f is not culprit]
            message = f"{e.message} (a variant of it was left out)"
            problems.append(
                NativeProblem(culprit.path, e.line or 0, message, str(culprit.func), str(culprit.func.name))
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
        self.problems: tuple[NativeProblem, ...] = tuple(problems)
        self.unknown_by_schema: dict[str, NativeProblem] = {p.schema: p for p in problems if p.schema}
        self.unknown_by_name: dict[str, NativeProblem] = {p.name: p for p in problems if p.name}
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
        for f in self.loader_functions:
            s = str(f.func)
            prev = self.by_schema.get(s)
            if prev is not None:
                raise NativeIndexError(
                    f"duplicate function schema: {s} (also at line {prev.source_line})",
                    path=f.path,
                    line=f.source_line,
                )
            self.by_schema[s] = f
            self.by_signature[f.func.signature()].append(f)
            self.by_name.setdefault(str(f.func.name), f)

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
        if tags_text is not None:
            valid_tags = _parse_tags(tags_text, tags_path or "tags.yaml")
        entries = _read_entries(native_text, path)
        rs: list[NativeFunction] = []
        problems: list[NativeProblem] = []
        for ent in entries:
            try:
                rs.append(_from_entry(ent, valid_tags, path, legacy, rules))
            except UnknownToRules as e:  # costs this function only
                problems.append(_problem(ent, path, e))
        if legacy:
            # 2021-era torchgen generated nothing and had no view groups
            grouped: list[NativeFunction | NativeFunctionsViewGroup] = list(rs)
        else:
            try:
                rs, grouped = _generate_and_group(rs, problems)
            except NativeIndexError:
                raise
            except ValueError as e:  # e.g. kind() of a schema both out= and inplace
                raise NativeIndexError(str(e), path=path) from None
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
