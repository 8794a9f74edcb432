"""Scalars of the YAML subset: PyYAML's implicit resolution, plain and flow values, shared checks."""

from __future__ import annotations

import re
import string

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any

STR_TAG = "tag:yaml.org,2002:str"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
# SafeConstructor.bool_values
BOOL_VALUES = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


class Unsupported(Exception):
    """The text is outside the subset (or not valid YAML): use PyYAML."""


# -- implicit resolution of plain scalars (yaml.resolver.Resolver) ----------------------------

_BOOL_WORDS = frozenset("yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF".split())
_NULL_WORDS = frozenset({"~", "null", "Null", "NULL"})
# The first characters for which PyYAML registers implicit resolvers other than bool and null
# (int, float, timestamp, merge, value, and the `!`/`&`/`*` one), and every character their
# patterns can match: a scalar with any other character can only be a string.
_NUMERIC_START = frozenset("-+.0123456789<=!&*")
_NUMERIC_CHARS = frozenset("0123456789-+_.:xobBeEaAcCdDfFiInNTtZ \t<=!&*")


def resolve_plain(value: str) -> str | None:
    """The tag PyYAML's SafeLoader gives a plain scalar: STR_TAG, BOOL_TAG or NULL_TAG; None
    when it may be something else (an int, a float, a timestamp, …)."""
    if not value:
        return NULL_TAG
    first = value[0]
    if first in "yYnNtTfFoO":
        if value in _BOOL_WORDS:
            return BOOL_TAG
        if first in "nN" and value in _NULL_WORDS:
            return NULL_TAG
        return STR_TAG
    if first == "~":
        return NULL_TAG if value == "~" else STR_TAG
    if first in _NUMERIC_START:
        if first in "-+" and len(value) > 1 and value[1] not in "0123456789.":
            return STR_TAG  # a sign not followed by a digit or '.': no number can match
        if _NUMERIC_CHARS.issuperset(value):
            return None
    return STR_TAG


# -- what every scanner of the subset shares ---------------------------------------------------

# what only PyYAML may read: tabs, CR, other control characters (and non-ASCII, tested apart)
OUTSIDE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:, *[A-Za-z_][A-Za-z0-9_]*)*")
# a plain scalar cannot start with an indicator ('-' is handled apart)
INDICATORS = frozenset("?:,[]{}#&*!|>'\"%@`")


def significant(line: str) -> bool:
    s = line.lstrip(" ")
    return bool(s) and s[0] != "#"


# -- plain and flow values as Python values (SafeLoader's construction) -------------------------

_BOOL_TRUE = {"yes", "true", "on"}
_SPECIAL_START = set("'\"[]{}&*!|>%@`#,?:-")
# first characters of plain scalars the YAML 1.1 resolver can only read as strings
# (bool/null/int/float start with one of yYnNtTfFoO~+-.0-9)
PLAIN_STR_START = frozenset(set(string.ascii_letters + "_(") - set("yYnNtTfFoO"))


def plain_value(value: str) -> Any:
    """A plain YAML scalar (comment already removed) -> Python value, as SafeLoader would."""
    if not value:
        return None
    q = value[0]
    if q in "'\"":
        # simple quoted scalars only: no escapes, no embedded quotes
        inner = value[1:-1]
        if len(value) < 2 or value[-1] != q or q in inner or "\\" in inner or "\n" in inner:
            raise Unsupported
        return inner
    if q in PLAIN_STR_START and ": " not in value and not value.endswith(":"):
        return value  # cannot resolve to bool/null/number: a string
    if value[0] in _SPECIAL_START:
        # '-' / '?' / ':' start plain scalars only if followed by a non-space; keep it simple
        if value[0] in "-?:" and len(value) > 1 and value[1] != " " and value[0] != ":":
            pass
        else:
            raise Unsupported
    if ": " in value or value.endswith(":"):
        raise Unsupported
    tag = resolve_plain(value)  # PyYAML's implicit resolution (None: maybe a number, …)
    if tag == STR_TAG:
        return value
    if tag == BOOL_TAG:
        return value.lower() in _BOOL_TRUE
    if tag == NULL_TAG:
        return None
    raise Unsupported  # ints, floats, timestamps...: let PyYAML convert them


def _strip_comment(value: str) -> str:
    if value.startswith("#"):
        return ""
    i = value.find(" #")
    if i >= 0:
        value = value[:i]
    return value.rstrip(" ")


def flow_value(raw: str) -> Any:
    v = _strip_comment(raw)
    if v == "{}":
        return {}
    if v.startswith("["):
        if not v.endswith("]"):
            raise Unsupported
        inner = v[1:-1].strip()
        if not inner:
            return []
        return [plain_value(x.strip()) for x in inner.split(",")]
    return plain_value(v)


def fast_value(raw: str) -> Any:
    # the common case (a schema, a name, a list of names) without the general path
    if raw and "#" not in raw and ": " not in raw and raw[-1] != ":":
        first = raw[0]
        if first in PLAIN_STR_START:
            return raw.rstrip(" ")
        if first in "yYnNtTfFoO":  # a string unless a bool or null word (what _plain decides)
            value = raw.rstrip(" ")
            if resolve_plain(value) == STR_TAG:
                return value
    return flow_value(raw)
