"""Codegen-stage checks (filled in below)."""

from __future__ import annotations


def codegen_checks(result, index):  # noqa: ANN001, ANN201
    return []
