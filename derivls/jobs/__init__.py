"""Entry jobs: a worker subprocess per document, results kept per entry (compile-on-save and gradcheck-on-save)."""
