"""Codes of derivatives.yaml's shape: what reading it as YAML (and derivls's size limits) finds."""

from __future__ import annotations

from derivls.codes.model import Severity, Stage, declare

ERROR, WARNING, YAML = Severity.ERROR, Severity.WARNING, Stage.YAML

YAML_SYNTAX = declare(
    "yaml-syntax",
    ERROR,
    YAML,
    "the text is not YAML (or uses YAML the three files never use: anchors, aliases, tags)",
    what="""The entry cannot be read as YAML: an unclosed bracket or quote, a bad indentation, or YAML
    features derivatives.yaml never uses (anchors, aliases, tags). Only the broken entry is lost: the
    entries after it are still analysed.""",
    why="""torchgen reads the file with yaml.load: a syntax error stops the whole build.""",
    wrong="""
- name: abs(Tensor self) -> Tensor
  self: [grad * self.sgn()
""",
    right="""
- name: abs(Tensor self) -> Tensor
  self: grad * self.sgn()
""",
    fix="Close the bracket or quote the message points at; quote a formula that starts with `[`, `{`, `*` or `&`.",
)

YAML_VALUE = declare(
    "yaml-value",
    ERROR,
    YAML,
    "a YAML value that cannot be constructed (e.g. a malformed tagged scalar)",
    what="""A value is valid YAML syntax but cannot be turned into a Python value by YAML's safe loader.""",
    why="""torchgen's yaml.load raises on it, and the build stops.""",
    wrong="""
- name: abs(Tensor self) -> Tensor
  self: !!int grad
""",
    right="""
- name: abs(Tensor self) -> Tensor
  self: grad * self.sgn()
""",
    example=None,
    tested_by="tests/unit/test_robustness.py",
)

DUPLICATE_KEY = declare(
    "duplicate-key",
    ERROR,
    YAML,
    "the same key twice in one mapping (a warning under the 2021 rules)",
    what="""One mapping (an entry, or a dispatch section) has the same key twice, e.g. two `self:` formulas.""",
    why="""torchgen's YAML loader refuses duplicate keys and rejects the whole file; the 2021 loader silently
    kept the last one (a warning there).""",
    wrong="""
- name: abs(Tensor self) -> Tensor
  self: grad * self.sgn()
  self: grad * self.sign()
""",
    right="""
- name: abs(Tensor self) -> Tensor
  self: grad * self.sgn()
""",
    fix="Merge the two formulas into one.",
)

ENTRY_NOT_MAPPING = declare(
    "entry-not-mapping",
    ERROR,
    YAML,
    "a list item that is not a `name: <schema>` mapping",
    what="""An item of the top-level list is not a mapping (e.g. a bare string).""",
    why="""load_derivatives reads each item as a mapping with a `name:` key and fails on anything else.""",
    wrong="""
- abs(Tensor self) -> Tensor
""",
    right="""
- name: abs(Tensor self) -> Tensor
  self: grad * self.sgn()
""",
)

IGNORED_KEY = declare(
    "ignored-key",
    WARNING,
    YAML,
    "a formula beside a `dispatch:` section (torchgen ignores it)",
    what="""An entry has a `dispatch:` section and also a formula directly under it.""",
    why="""With a dispatch section, torchgen only reads the formulas under the dispatch keys: the other one is
    silently ignored, which is rarely what was meant.""",
    wrong="""
- name: abs(Tensor self) -> Tensor
  self: grad * self.sgn()
  dispatch:
    Default:
      self: grad * self.sgn()
""",
    right="""
- name: abs(Tensor self) -> Tensor
  dispatch:
    Default:
      self: grad * self.sgn()
""",
    fix="Move the formula under a dispatch key (e.g. `Default:`).",
)

SECTION_NOT_MAPPING = declare(
    "section-not-mapping",
    ERROR,
    YAML,
    "a dispatch key whose value is not a mapping of names to formulas",
    what="""A key of a `dispatch:` section (`Default:`, `AutogradNestedTensor:`, …) has a value that is not a
    mapping from argument names to formulas.""",
    why="""load_derivatives iterates over that value's items and fails on anything else.""",
    wrong="""
- name: abs(Tensor self) -> Tensor
  dispatch:
    Default: grad * self.sgn()
""",
    right="""
- name: abs(Tensor self) -> Tensor
  dispatch:
    Default:
      self: grad * self.sgn()
""",
)

DISPATCH_NOT_MAPPING = declare(
    "dispatch-not-mapping",
    ERROR,
    YAML,
    "a `dispatch:` value that is not a mapping of dispatch keys",
    what="""The value of `dispatch:` is not a mapping of dispatch keys (`Default`, `AutogradCUDA`, …) to
    formulas.""",
    why="""load_derivatives reads it as such a mapping and fails on anything else.""",
    wrong="""
- name: abs(Tensor self) -> Tensor
  dispatch: Default
""",
    right="""
- name: abs(Tensor self) -> Tensor
  dispatch:
    Default:
      self: grad * self.sgn()
""",
)

NOT_A_LIST = declare(
    "not-a-list",
    ERROR,
    YAML,
    "the file is not a list of entries",
    what="""The document's top level is not a YAML list (e.g. a mapping), or there is no document: the file is
    empty, or holds only comments and blank lines (`[]`, a list of no entries, is fine).""",
    why="""load_derivatives iterates over a list of entries; anything else fails. An empty file loads as None:
    `'NoneType' object is not iterable`.""",
    wrong="""
name: abs(Tensor self) -> Tensor
self: grad * self.sgn()
""",
    right="""
- name: abs(Tensor self) -> Tensor
  self: grad * self.sgn()
""",
)

TOO_MANY_ENTRIES = declare(
    "too-many-entries",
    ERROR,
    YAML,
    "more entries than derivls analyses (20,000); the rest is refused",
    what="""The file has more entries than derivls's limit (20,000; the real file has ~700). derivls analyses
    the first ones and refuses the rest of the file from the first entry over the limit.""",
    why="""A safety limit of derivls, not of PyTorch: it keeps a hostile or generated file from exhausting the
    editor's memory.""",
    wrong="(a derivatives.yaml of 20,001 entries)",
    right="(a derivatives.yaml of at most 20,000 entries)",
    example=None,
    tested_by="tests/reliability/test_sizes.py",
)

ENTRY_TOO_LARGE = declare(
    "entry-too-large",
    ERROR,
    YAML,
    "one entry over derivls's size limit (1 MB); it is refused",
    what="""One entry is longer than derivls's limit (1,000,000 characters); it is refused and not checked.""",
    why="""A safety limit of derivls, not of PyTorch: real entries are a few hundred characters.""",
    wrong="(an entry whose formula is a million characters long)",
    right="(entries of a few hundred characters)",
    example=None,
    tested_by="tests/reliability/test_sizes.py",
)

DIAGNOSTICS_TRUNCATED = declare(
    "diagnostics-truncated",
    WARNING,
    YAML,
    "more diagnostics than derivls shows per file (10,000)",
    what="""The file has more diagnostics than derivls reports per file (10,000); the rest are not shown.""",
    why="""A limit of derivls, so an editor stays responsive; fix the first ones and the others appear.""",
    wrong="(a file with more than 10,000 problems)",
    right="(a file with fewer problems)",
    example=None,
    tested_by="tests/reliability/test_sizes.py",
)
