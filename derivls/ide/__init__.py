"""What an editor asks about a derivatives.yaml, as plain data: no LSP types below derivls.server.

Modelled on rust-analyzer's `ide` crate. Every position is 0-based lines and code-point columns
(`derivls.base.diagnostics.Span`); the server converts to the client's encoding at its edge.

- targets: what is under the cursor        - facts: arguments, outputs, C++ types, overload groups
- context: where completion is asked         - hover, completion, inlay, actions (quick fixes)
- navigation: definition and references      - symbols: document and workspace symbols
- generated: code lenses and the generated C++ of an entry
- manual: FunctionsManual's functions        - layout: where the files around a derivatives.yaml are
"""
