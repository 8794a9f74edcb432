"""An open derivatives.yaml: what the workspace knows of it (derivls.project.workspace.Source: its native files,
analyzer and analysis) and what the editor sees of it (URI, version, lines in the client's encoding,
generated views, pre-serialized answers).

Nothing here speaks LSP; the pipeline keeps documents up to date, the features read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from derivls.project.workspace import Source
from derivls.server.documents.positions import LineIndex


@dataclass(eq=False)
class DerivDocument(Source):
    """One open derivatives.yaml and its latest analysis (`path` etc.: derivls.project.workspace.Source)."""

    uri: str
    version: int | None = None
    lines: LineIndex | None = None
    generated_shown: set[str] = field(default_factory=set)  # derivls-generated: URIs shown for it
    generated_sent: dict[str, str] = field(default_factory=dict)  # … and the content last sent for each
    fragments: dict[str, object] = field(default_factory=dict)  # answer kind → raw.FragmentCache
    settled: bool = False  # its first analysis is out and the heap was frozen after it (pipeline.py)


__all__ = ["DerivDocument"]
