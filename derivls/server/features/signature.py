"""Signature help → LSP: ide.signature's helper/ATen call under the cursor (every overload)."""

from __future__ import annotations

from lsprotocol import types

from derivls.ide import signature as ide_signature
from derivls.server.documents.pipeline import current
from derivls.server.documents.positions import to_client_column
from derivls.server.runtime.app import DerivlsServer

TRIGGER_CHARACTERS = ["(", ","]


def _label_offsets(ls: DerivlsServer) -> bool:
    try:
        info = ls.client_capabilities.text_document.signature_help.signature_information  # type: ignore[union-attr]
        return bool(info.parameter_information.label_offset_support)  # type: ignore[union-attr]
    except AttributeError:
        return False


def signature_help(ls: DerivlsServer, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return None
    line, column = doc.lines.column(params.position)
    found = ide_signature.signature_help(doc.analysis, line, column)
    if found is None:
        return None
    offsets = _label_offsets(ls)
    encoding = ls.encoding
    signatures = []
    for s in found.signatures:
        parameters = [
            types.ParameterInformation(
                label=(to_client_column(s.label, start, encoding), to_client_column(s.label, end, encoding))
                if offsets
                else s.label[start:end]
            )
            for start, end in s.parameters
        ]
        signatures.append(types.SignatureInformation(label=s.label, parameters=parameters))
    return types.SignatureHelp(
        signatures=signatures,
        active_signature=found.active_signature,
        active_parameter=found.active_parameter,
    )


__all__ = ["TRIGGER_CHARACTERS", "signature_help"]
