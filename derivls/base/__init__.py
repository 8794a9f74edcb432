"""The small primitives every layer uses, each keeping its one job (bounds, caches, children, exits)."""
