"""tags.yaml: the names of its tags."""

from __future__ import annotations

from derivls.yamlsubset.scalars import INDICATORS, KEY, OUTSIDE, STR_TAG, Unsupported, resolve_plain, significant


def scan_tags(text: str) -> list[str]:
    """The `tag:` values of tags.yaml, in order, when every entry has a `tag:` name and a
    non-empty `desc:` (a plain line or a `|` block); anything else: Unsupported."""
    if not text.isascii() or OUTSIDE.search(text):
        raise Unsupported
    lines = text.split("\n")
    tags: list[str] = []
    entry: dict[str, bool] | None = None  # key -> has a non-empty value

    def close(entry: dict[str, bool] | None) -> None:
        if entry is not None and not (entry.get("tag") and entry.get("desc")):
            raise Unsupported  # PyYAML's reading gives the error

    i = 0
    while i < len(lines):
        line = lines[i]
        if not significant(line):
            i += 1
            continue
        if line.startswith("- "):
            close(entry)
            entry = {}
            content = line[2:]
            if content.startswith(" "):
                raise Unsupported
        elif line.startswith("  ") and not line.startswith("   ") and entry is not None:
            content = line[2:]
        else:
            raise Unsupported
        colon = content.find(":")
        key = content[:colon]
        rest = content[colon + 1 :]
        if colon <= 0 or not KEY.fullmatch(key) or key in entry or (rest and rest[0] != " "):
            raise Unsupported
        value = rest.strip(" ")
        i += 1
        if value == "|":
            # a literal block: not empty if its first non-blank line is indented further than
            # the keys; it goes on while lines are blank or indented as far as that one
            j = i
            while j < len(lines) and not lines[j].strip(" "):
                j += 1
            block_indent = len(lines[j]) - len(lines[j].lstrip(" ")) if j < len(lines) else 0
            if block_indent <= 2 or any(len(lines[k]) > block_indent for k in range(i, j)):
                raise Unsupported  # empty, or a leading blank line longer than the indentation
            while j < len(lines) and (not lines[j].strip(" ") or lines[j].startswith(" " * block_indent)):
                j += 1
            entry[key] = True
            i = j
            continue
        if not value or value[0] in INDICATORS or value[0] == "-" or " #" in value or ": " in value or value[-1] == ":":
            raise Unsupported
        if resolve_plain(value) != STR_TAG:
            raise Unsupported
        if key == "tag":
            tags.append(value)
        entry[key] = True
    close(entry)
    return tags
