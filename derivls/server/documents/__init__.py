"""Open documents: the pipeline (edit → analyse → publish), their state and positions, native indexes
and overlays, settings, the entry cache's saves and compile-on-save."""
