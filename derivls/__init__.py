"""derivls: a language server and checker for PyTorch's derivatives.yaml."""

__version__ = "0.1.0"
