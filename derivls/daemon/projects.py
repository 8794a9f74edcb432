"""The projects a daemon keeps open: each derivatives.yaml's native index, header index and analyzer, so that
a check after a one-entry edit analyses that entry (DocumentAnalyzer compares the new text's entries with
the last version's, as for a keystroke in the server).

A project is reused while everything the check reads but the derivatives.yaml's own text is unchanged:
its key is the whole-result cache's key (derivls.project.resultcache.check_key: the paths as given and absolute,
native_functions.yaml, tags.yaml, the C++ sources the formula checks read, the release files, derivls's
code) with the text left out. Any other change opens the project again, from the disk caches as a fresh
`derivls check` would. At most KEEP projects stay open (the least recently used is dropped).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from derivls.base.gcpolicy import freeze_heap, mark_replaced
from derivls.project.opener import Project, open_project, read_text
from derivls.project.resultcache import CachedCheck, check_key

KEEP = 3  # projects open at once (a tree's derivatives.yaml, a release branch's, a wheel's)
KIND = "daemon-project"


class Projects:
    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._open: OrderedDict[str, Project] = OrderedDict()
        self.opened = 0  # projects opened (for `derivls daemon status`)

    def __len__(self) -> int:
        return len(self._open)

    def check(
        self, path: Path, native: Path | None, tags: Path | None, profile: str, torch_version: str | None
    ) -> CachedCheck:
        """`path`'s diagnostics and rules, as `derivls check` computes them (raises UsageError as it does)."""
        text = read_text(path, "derivatives.yaml")
        key = check_key(path, native, tags, profile, torch_version, text="", kind=KIND)
        project = self._open.get(key) if key is not None else None
        if project is None:
            project = open_project(path, native, tags, profile, torch_version=torch_version)
            self.opened += 1
            if key is not None and check_key(path, native, tags, profile, torch_version, text="", kind=KIND) == key:
                self._keep(key, project)
        else:
            self._open.move_to_end(key)  # type: ignore[arg-type]
        analysis = project.analyzer.analyse(text)
        rules = project.release.describe() if project.release is not None else None
        return CachedCheck(tuple(project.setup) + analysis.diagnostics, rules)

    def _keep(self, key: str, project: Project) -> None:
        self._open[key] = project
        while len(self._open) > self.keep:
            self._open.popitem(last=False)
            mark_replaced()  # what the freeze below kept of it may be garbage now
        freeze_heap()  # the index and entry results are long-lived: out of the cyclic GC's reach


__all__ = ["KEEP", "Projects"]
