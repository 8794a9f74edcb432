"""Open a derivatives.yaml (derivls.project.opener) and analyse it: what `check`, `dump`,
`check --compile` and `gradcheck` start from."""

from __future__ import annotations

from pathlib import Path

AUTO = "auto"  # derivls.derivatives.profiles.AUTO (not imported: `check` answered from the cache never loads it)


def analyse_path(
    path: Path, native: Path | None, tags: Path | None, profile: str = AUTO, torch_version: str | None = None
):
    """Open `path` (derivls.project.opener) and analyse it: (analysis, diagnostics about the set-up). Raises UsageError."""
    analysis, setup, _ = analyse_path_with_rules(path, native, tags, profile, torch_version)
    return analysis, setup


def analyse_path_with_rules(
    path: Path, native: Path | None, tags: Path | None, profile: str = AUTO, torch_version: str | None = None
):
    """(analysis, set-up diagnostics, which rules were used and why). Raises UsageError."""
    from derivls.project.opener import open_project, read_text

    text = read_text(path, "derivatives.yaml")
    project = open_project(path, native, tags, profile, torch_version=torch_version)
    return project.analyzer.analyse(text), list(project.setup), project.release


def analyse_path_with_native(
    path: Path, native: Path | None, tags: Path | None, profile: str = AUTO, torch_version: str | None = None
):
    """(analysis, set-up diagnostics, rules, the errors of native_functions.yaml / tags.yaml themselves as
    ((path, diagnostics), ...): its warnings, what an unknown release may know, are summed up on the
    derivatives.yaml's line 1; `derivls check native_functions.yaml` lists them). Raises UsageError."""
    from derivls.base.diagnostics import Severity
    from derivls.project.opener import open_project, read_text

    text = read_text(path, "derivatives.yaml")
    project = open_project(path, native, tags, profile, torch_version=torch_version)
    errors = tuple((p, tuple(d for d in ds if d.severity == Severity.ERROR)) for p, ds in project.native)
    return project.analyzer.analyse(text), list(project.setup), project.release, errors


__all__ = ["AUTO", "analyse_path", "analyse_path_with_rules", "analyse_path_with_native"]
