"""The commands: the parser, one module per subcommand, and what they print."""

from derivls.cli.commandline import main

__all__ = ["main"]  # `derivls.cli:main`, `derivls.cli.main(argv)`
