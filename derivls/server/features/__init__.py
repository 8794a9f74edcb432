"""One thin adapter per LSP feature: derivls.ide's plain answers → LSP types (hover, completion, ...)."""
