"""PyYAML, bounded: no anchors or aliases, and short reprs of values in messages.

derivatives.yaml, native_functions.yaml and tags.yaml never use anchors (`&a`) or aliases
(`*a`). An alias makes a node stand for another one, so a few hundred bytes of nested aliases
("billion laughs") construct gigabytes of values, and any message that formats such a value
does the same. ``refuse_aliases(text)`` walks PyYAML's event stream (linear in the text, no
value is built) and raises ``AliasRefused`` - a ``yaml.MarkedYAMLError``, so every caller that
already reports PyYAML's errors with their position reports this one too - at the first anchor
or alias. Call it before ``yaml.compose`` / ``yaml.load``.

``short_repr(value, limit)`` is ``repr(value)`` cut to ``limit`` characters without building
the whole repr of a huge value.
"""

from __future__ import annotations

import reprlib

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "REPR_LIMIT",
    "alias_refused_class",
    "refuse_aliases",
    "safe_compose",
    "safe_load",
    "short_repr",
    "short_str",
]

REPR_LIMIT = 200

ALIAS_PROBLEM = (
    "YAML anchors and aliases ('&name', '*name') are not supported in this file; write the value out in full"
)


_alias_refused: type | None = None


def alias_refused_class() -> type:
    global _alias_refused
    if _alias_refused is None:
        import yaml

        class AliasRefused(yaml.composer.ComposerError):
            """An anchor or an alias: refused, with the position of the first one."""

        _alias_refused = AliasRefused
    return _alias_refused


def _may_hold_alias(text: str) -> bool:
    return "&" in text or "*" in text


def refuse_aliases(text: str) -> None:
    """Raise AliasRefused at the first anchor or alias of `text` (a YAML syntax error: PyYAML's own)."""
    if not _may_hold_alias(text):
        return
    import yaml

    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_cls(text)
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                what = "alias" if isinstance(event, yaml.AliasEvent) else "anchor"
                raise alias_refused_class()(
                    None, None, f"{ALIAS_PROBLEM} (found {what} '{event.anchor}')", event.start_mark
                )
    finally:
        loader.dispose()


def safe_compose(text: str, loader: Any = None) -> Any:
    """yaml.compose(text) without anchors or aliases."""
    import yaml

    refuse_aliases(text)
    return yaml.compose(text, Loader=loader or getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def safe_load(text: str, loader: Any = None) -> Any:
    """yaml.load(text) without anchors or aliases."""
    import yaml

    refuse_aliases(text)
    return yaml.load(text, Loader=loader or getattr(yaml, "CSafeLoader", yaml.SafeLoader))


_repr = reprlib.Repr()
_repr.maxstring = REPR_LIMIT
_repr.maxother = REPR_LIMIT
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 8
_repr.maxlevel = 3


def short_repr(value: object, limit: int = REPR_LIMIT) -> str:
    """repr(value), at most `limit` characters (then '…'); never builds the repr of a whole huge value."""
    try:
        if isinstance(value, (str, bytes)) and len(value) <= limit:
            text = repr(value)
        else:
            text = _repr.repr(value)
    except ValueError:  # an int too long to print (sys.get_int_max_str_digits)
        text = f"<{type(value).__name__} too long to print>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short_str(value: object, limit: int = REPR_LIMIT) -> str:
    """str(value), at most `limit` characters (then '…'): a label for any value a YAML file holds."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 1] + "…"
    return short_repr(value, limit)
