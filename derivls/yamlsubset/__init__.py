"""The small YAML subset PyTorch's yaml files are written in, read without PyYAML: the one reader
for derivatives.yaml, native_functions.yaml and tags.yaml.

Importing PyYAML costs more than a tenth of a ``derivls check`` (its reader compiles a large
regular expression), composing each derivatives.yaml entry with it a little more, and reading
the 16k-line native_functions.yaml ~0.35 s even with libyaml. The files only use a regular
subset of YAML, so:

* ``compose_entry_chunk`` (compose.py) composes one derivatives.yaml entry (a chunk of
  ``document.split_entries``) into nodes shaped like PyYAML's (``id``, ``tag``, ``value``,
  ``start_mark``/``end_mark`` with ``line``, ``column``, ``index``), with the values, tags and
  marks libyaml gives;
* ``scan_native_entries`` (native.py) reads native_functions.yaml's entries into Python values
  with the lines of their keys, line by line (no nodes: the file has 16k lines);
* ``scan_tags`` (tags.py) reads tags.yaml's tag names;
* scalars.py: PyYAML's implicit resolver (``resolve_plain``), plain and flow values, and what
  the three scanners share.

Each raises ``Unsupported`` on anything outside the subset, including everything PyYAML would
reject or report: the caller then uses PyYAML, so the outcome is PyYAML's in every case.
tests/unit/test_yamlsubset.py and test_aten_native.py compare both on the real files and on
variations of them.
"""

from __future__ import annotations

from derivls.yamlsubset.compose import Mark, Node, compose_entry_chunk
from derivls.yamlsubset.native import ScannedEntry, scan_native_entries
from derivls.yamlsubset.scalars import BOOL_TAG, BOOL_VALUES, NULL_TAG, STR_TAG, Unsupported, resolve_plain
from derivls.yamlsubset.tags import scan_tags

__all__ = [
    "BOOL_TAG",
    "BOOL_VALUES",
    "NULL_TAG",
    "STR_TAG",
    "Mark",
    "Node",
    "ScannedEntry",
    "Unsupported",
    "compose_entry_chunk",
    "resolve_plain",
    "scan_native_entries",
    "scan_tags",
]
