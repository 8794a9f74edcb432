"""Hostile inputs, generated at test time: alias bombs, huge files, and the like."""

from __future__ import annotations

from tests.reliability.realfiles import REAL_NATIVE

LEVELS = 9  # 9 levels of 9 aliases: 9**9 = 387 million strings once expanded, from under 1 KB

ABS = "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"


def _anchors(indent: str, key: str = "x") -> list[str]:
    """`x0: &a0 [...]`, `x1: &a1 [*a0, ...]`, …: the nested anchors of a billion laughs."""
    lines = [f"{indent}{key}0: &a0 [" + ", ".join(['"lol"'] * 9) + "]"]
    for i in range(1, LEVELS):
        lines.append(f"{indent}{key}{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return lines


def _top() -> str:
    return ", ".join([f"*a{LEVELS - 1}"] * 9)


def bomb_in_entry() -> str:
    """A derivatives.yaml entry whose formula is the bomb."""
    return (
        ABS
        + "\n".join(["- name: mul.Tensor(Tensor self, Tensor other) -> Tensor", *_anchors("  "), f"  self: [{_top()}]"])
        + "\n"
    )


def bomb_in_output_differentiability() -> str:
    return (
        ABS
        + "\n".join(
            [
                "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor",
                *_anchors("  "),
                f"  output_differentiability: [{_top()}]",
                "  self: grad",
            ]
        )
        + "\n"
    )


def bomb_as_list_item() -> str:
    """An entry that is itself the bomb (a list, not a mapping)."""
    anchors = ['&a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, LEVELS):
        anchors.append(f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return ABS + "- [" + ", ".join(anchors) + ", [" + _top() + "]]\n"


def _flow_bomb() -> str:
    """One flow value holding the whole bomb: `[&a0 [...], &a1 [*a0, ...], ..., [*a8, ...]]`."""
    anchors = ['&a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, LEVELS):
        anchors.append(f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "[" + ", ".join(anchors) + ", [" + _top() + "]]"


def native_bomb(key: str = "variants") -> str:
    """The real native_functions.yaml with the first entry's `key:` (added or replaced) a bomb."""
    text = REAL_NATIVE.read_text(encoding="utf-8")
    first = text.index("\n- func:") + 1
    end = text.index("\n", first) + 1
    if key == "func":
        return text[:first] + f"- func: {_flow_bomb()}\n" + text[end:]
    return text[:end] + f"  {key}: {_flow_bomb()}\n" + text[end:]


def repeated_entry(megabytes: float) -> str:
    """One entry repeated to `megabytes` MB: every copy after the first is a duplicate."""
    return ABS * max(1, int(megabytes * 1e6) // len(ABS))


def huge_name(megabytes: float) -> str:
    """One entry whose `name:` value is `megabytes` MB long."""
    return "- name: abs(" + "Tensor self, " * int(megabytes * 1e6 / 13) + ") -> Tensor\n  self: grad\n"


def duplicate_entries(count: int) -> str:
    """`count` entries for one function, each a little different (so not one cached chunk)."""
    return "".join(f"- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn() * {i}\n" for i in range(count))


def renamed_native_copies(megabytes: float) -> str:
    """The real native_functions.yaml's functions copied until `megabytes` MB, each copy's operators
    renamed (`c3_add.Tensor`, its `structured_delegate:` and `autogen:` names too): a valid file of
    ~190,000 functions at 50 MB, each one a full NativeFunction."""
    import re

    from derivls.aten import native_generated as g

    known = {
        *g.FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT,
        *g.MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT,
        *g.INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY,
        *g.OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY,
    }

    text = REAL_NATIVE.read_text(encoding="utf-8")
    # torchgen lists by name the functions without an out= variant: their renamed copies are left out
    entries = text[text.index("\n- func:") + 1 :].split("\n- func: ")
    body = "\n- func: ".join(e for e in entries if e.split("(", 1)[0].removeprefix("- func: ") not in known)
    names = re.compile(r"^(- func: |  structured_delegate: )(\w)", re.MULTILINE)
    autogen = re.compile(r"^(  autogen: )(.*)$", re.MULTILINE)
    copies = [text]
    for k in range(1, max(1, int(megabytes * 1e6) // len(text))):
        copy = names.sub(rf"\g<1>c{k}_\g<2>", body)
        copies.append(autogen.sub(lambda m, k=k: m[1] + ", ".join(f"c{k}_{n.strip()}" for n in m[2].split(",")), copy))
    return "".join(copies)
