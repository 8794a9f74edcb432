"""derivls [serve] | check | dump | explain | codegen | cache | daemon | gradcheck: the parser and the dispatch.

Heavy imports (pygls for `serve`, the ATen model and the loader for `check`) happen inside the
command that needs them, so `derivls check` starts fast; a check of unchanged inputs is answered
from the whole-result cache (derivls.project.resultcache) without importing the loader at all.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from derivls import __version__
from derivls.base.diagnostics import Severity
from derivls.base.exits import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, UsageError, error_line

# derivls.derivatives.profiles's AUTO and CHOICES, spelled out so the parser does not import the
# profiles (tests/unit/test_resultcache.py checks they are equal)
AUTO = "auto"
CHOICES = (AUTO, "torchgen", "legacy")

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import NoReturn, TextIO


class Parser(argparse.ArgumentParser):
    """argparse's parser saying every refusal in derivls's one voice: `derivls CMD: error: MESSAGE.`, one line on
    stderr, exit status 2 (no usage block; the message names `derivls CMD --help`). An unknown option is the
    subcommand's error, not the top level's; options that conflict are refused (`conflict`); a paths file
    (`check @FILE`) that cannot be read is said so (not a traceback, not an errno)."""

    def error(self, message: str) -> NoReturn:
        self.refuse(self._command(), message)

    def _command(self) -> str | None:
        words = self.prog.split()
        return words[1] if len(words) > 1 else None

    def refuse(self, command: str | None, message: str) -> NoReturn:
        hint = f"derivls {command} --help" if command else "derivls --help"
        self.exit(EXIT_USAGE, error_line(command, f"{message} (see `{hint}`)") + "\n")

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        parsed, extra = self.parse_known_args(args, namespace)
        command = getattr(parsed, "command", None)
        if extra:
            self.refuse(command, f"unrecognized arguments: {' '.join(extra)}")
        problem = conflict(parsed)
        if problem is not None:
            self.refuse(command, problem)
        return parsed

    def _read_args_from_files(self, arg_strings: list[str]) -> list[str]:
        """`@FILE`: the paths in FILE, one a line (blank lines skipped); a FILE that is missing, a folder,
        not UTF-8 text or names no path is refused."""
        expanded: list[str] = []
        for arg in arg_strings:
            if arg[:1] and self.fromfile_prefix_chars and arg[0] in self.fromfile_prefix_chars:
                expanded.extend(self._paths_in(arg[1:]))
            else:
                expanded.append(arg)
        return expanded

    def _paths_in(self, name: str) -> list[str]:
        from derivls.base.limits import FileRefused, read_regular_file

        command = self._command()
        try:
            text = read_regular_file(name, "the paths file")
        except FileRefused as e:
            self.refuse(command, f"@{name}: {e}")
        except FileNotFoundError:
            self.refuse(command, f"@{name}: the paths file {name} does not exist")
        except UnicodeDecodeError:
            self.refuse(command, f"@{name}: the paths file {name} is not UTF-8 text (one path a line)")
        except OSError as e:
            self.refuse(command, f"@{name}: cannot read the paths file {name}: {e.strerror or e}")
        paths = [line for line in text.splitlines() if line.strip()]
        if not paths:
            self.refuse(command, f"@{name}: the paths file {name} names no path")
        return paths


def conflict(args: argparse.Namespace) -> str | None:
    """Why the options of `args` cannot go together (None: they can); fills the defaults left None to tell
    whether an option was given."""
    if args.command == "serve":
        if args.stdio and args.tcp:
            return "--stdio and --tcp are two transports: pass one"
        for option, value in (("--host", args.host), ("--port", args.port)):
            if value is not None and not args.tcp:
                return f"{option} is for --tcp (over stdio there is no {option[2:]})"
        args.host = args.host if args.host is not None else "127.0.0.1"
        args.port = args.port if args.port is not None else 2087
    elif args.command == "check":
        if not args.compile:
            for option, value in (("--cxx", args.cxx), ("--jobs", args.jobs)):
                if value is not None:
                    return f"{option} is for --compile (it chooses how the generated C++ is compiled)"
        if args.jobs is None:
            args.jobs = 2
    return None


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (1 to 65535)")
    return port


def _add_native_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--native", type=Path, metavar="FILE", help="native_functions.yaml (default: found next to PATH)"
    )
    parser.add_argument("--tags", type=Path, metavar="FILE", help="tags.yaml (default: beside native_functions.yaml)")
    parser.add_argument(
        "--profile",
        choices=CHOICES,
        default=AUTO,
        help="loader rules: torchgen (PyTorch 2.x) or legacy (the 2021 loader); auto picks by the files",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the persistent cache of native indexes (in the user cache folder)",
    )
    parser.add_argument(
        "--torch-version", metavar="X.Y", help="follow this PyTorch release's torchgen (default: found, else newest)"
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `command` (the one on the command line) the other commands' own options are
    left out when building them would import heavy modules (codegen's)."""
    parser = Parser(
        prog="derivls",
        description="Language server and checker for PyTorch's derivatives.yaml. With no command, serves LSP over stdio.",
    )
    parser.add_argument("--version", action="version", version=f"derivls {__version__}")
    commands: argparse._SubParsersAction = parser.add_subparsers(dest="command")  # (of Parser: every refusal one line)

    serve = commands.add_parser(
        "serve",
        help="serve the Language Server Protocol (default)",
        description="Serve the Language Server Protocol for an editor: over stdio (the default; `derivls` alone "
        "does the same), or to one TCP client with --tcp, for debugging. The log file and the port are checked "
        "before anything is served (docs/editors.md).",
    )
    add_serve_arguments(serve)

    check = commands.add_parser(
        "check",
        help="report every problem in derivatives.yaml files",
        fromfile_prefix_chars="@",  # @FILE: the paths in FILE, one a line (lintrunner's {{PATHSFILE}})
    )
    check.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="derivatives.yaml files; a native_functions.yaml stands for its tree's; @FILE reads paths from FILE"
        " (default: found)",
    )
    _add_native_options(check)
    check.add_argument(
        "--format",
        choices=("text", "json", "github", "lintrunner"),
        default="text",
        help="lintrunner: one LintMessage (JSON) per line, exit 0 (see docs/cli.md)",
    )
    check.add_argument(
        "--since",
        metavar="REF",
        help="report only the entries whose text differs from the file at git revision REF (a pull request's base)",
    )
    check.add_argument(
        "--daemon",
        action="store_true",
        help="ask this user's check daemon, which keeps the analysis warm (started if none runs; see `derivls daemon`)",
    )
    from derivls.cli.compile import add_compile_arguments

    add_compile_arguments(check)
    check.set_defaults(jobs=None)  # (None: not given; `conflict` refuses it without --compile, then makes it 2)

    dump = commands.add_parser("dump", help="print what the loader computes, as JSON")
    dump.add_argument("path", type=Path, metavar="PATH")
    _add_native_options(dump)

    from derivls.cli.cache import add_cache_command

    add_cache_command(commands)

    from derivls.cli.daemon import add_daemon_command

    add_daemon_command(commands)

    gradcheck = commands.add_parser(
        "gradcheck",
        help="check formulas with torch.autograd.gradcheck (compiles and RUNS the file's C++)",
        description="Compile the entries' formulas exactly as PyTorch's build would, load them into the chosen "
        "Python's torch and check them with torch.autograd.gradcheck on OpInfo's samples. This compiles and "
        "runs the C++ written in the file's formulas, as the build and the tests would: run it only on files "
        "you trust. Every compiler and the torch process run bounded (time, memory) and die with derivls; "
        "headers and libraries are the chosen torch's unless --torch-include says otherwise (docs/security.md).",
    )
    if command in (None, "gradcheck"):
        from derivls.cli.gradcheck import add_gradcheck_arguments

        add_gradcheck_arguments(gradcheck)

    from derivls.cli.explain import add_explain_command

    add_explain_command(commands)

    codegen = commands.add_parser("codegen", help="print the autograd nodes the codegen would generate")
    if command in (None, "codegen"):
        from derivls.cli.codegen import add_codegen_arguments

        add_codegen_arguments(codegen)
    return parser


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true", help="serve over stdio (the default)")
    parser.add_argument("--tcp", action="store_true", help="serve one TCP client, for debugging")
    parser.add_argument("--host", metavar="H", help="with --tcp: the address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", metavar="P", type=_port, help="with --tcp: the port to listen on (default: 2087)")
    parser.add_argument("--log-file", type=Path, metavar="FILE", help="append the server log to FILE (default: stderr)")
    parser.add_argument(
        "--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR"), help="(default: WARNING)"
    )


def run_dump(args: argparse.Namespace, out: TextIO) -> int:
    from derivls.derivatives.dump import dump
    from derivls.project.analyse import analyse_path

    analysis, extra = analyse_path(args.path, args.native, args.tags, args.profile, args.torch_version)
    problems = [d for d in (*extra, *(analysis.diagnostics if analysis else ())) if d.severity == Severity.ERROR]
    if analysis is None or problems:
        for d in problems or extra:
            sys.stderr.write(
                f"{args.path}:{d.span.line + 1}:{d.span.column + 1}: {d.severity.label}: {d.message} [{d.code}]\n"
            )
        if analysis is None:
            return EXIT_ERRORS
    import json

    json.dump(dump(analysis), out, indent=1)
    out.write("\n")
    return EXIT_ERRORS if problems else EXIT_OK


TERMINAL_HINT = (
    "derivls: this is a language server: it speaks LSP (JSON-RPC) on stdin/stdout for an editor;"
    " to check derivatives.yaml from a terminal, run `derivls check` (Ctrl-D or Ctrl-C ends this)\n"
)


def run_serve(args: argparse.Namespace) -> int:
    from derivls.server.runtime.main import serve

    if getattr(args, "log_file", None) is not None:
        writable_log(args.log_file)
    if getattr(args, "tcp", False):
        free_port(args.host, args.port)
    if not getattr(args, "tcp", False) and _stdin_is_terminal():
        sys.stderr.write(TERMINAL_HINT)  # someone typed `derivls`: say what it is, then serve
        sys.stderr.flush()

    return serve(args)


def writable_log(path: Path) -> None:
    """`serve --log-file FILE`: FILE can be appended to, before anything is served. Raises UsageError."""
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except IsADirectoryError:
        raise UsageError(f"--log-file {path} is a folder; give a file in it") from None
    except FileNotFoundError:
        raise UsageError(f"--log-file {path}: the folder {path.parent} does not exist") from None
    except OSError as e:
        raise UsageError(f"--log-file {path} cannot be written: {e.strerror or e}") from None


def free_port(host: str, port: int) -> None:
    """`serve --tcp`: host:port can be listened on (as asyncio's server binds it: SO_REUSEADDR on POSIX), checked
    before anything is served. Raises UsageError."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            if os.name == "posix":
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as e:  # (socket.gaierror is one: a host that does not resolve)
        raise UsageError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):  # closed
        return False


def main(argv: Sequence[str] | None = None, *, fast_exit: bool = False) -> int:
    """Run the command line; its exit code. `fast_exit` (the `derivls` executable): a one-shot command
    ends the process itself once its output is flushed (see `exit_now`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("--") and argv[0] not in ("--help", "--version"):
        argv = ["serve", *argv]  # `derivls` alone, or `derivls --tcp`, serves
    parser = build_parser(argv[0] if argv[0] in ("serve", "check", "dump") else None)
    args = parser.parse_args(argv)
    if args.command == "serve":
        return run_command(args, parser)
    from derivls.base.gcpolicy import one_shot

    with one_shot():
        code = run_command(args, parser)
    if fast_exit:
        exit_now(code)
    return code


def exit_now(code: int) -> NoReturn:
    """End the process at once with `code`, its output flushed: what a one-shot command built (the
    native index, every entry's analysis: ~10^5 objects) is not freed one by one at interpreter
    shutdown, which took 20-100 ms of `derivls check` (measured; mypy ends so too). Nothing else is
    owed at exit: the caches are written by a detached child (derivls/base/writebehind.py), temporary
    folders are removed by their `with` blocks, and a one-shot command starts no thread it leaves running.
    The one atexit duty is done here: what derivls.base.bounded started is killed and its scratch folder removed."""
    started = sys.modules.get("derivls.base.bounded")  # (imported only by commands that run a compiler or torch)
    if started is not None:
        started.remove_scratch()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the reader is gone (as BrokenPipeError in run_command), or closed
            pass
    os._exit(code)


@contextlib.contextmanager
def _exit_on_term() -> Iterator[None]:
    """While a command that starts compilers or a torch child runs, a SIGTERM (a CI job cancelled, a hook stopped)
    ends it as an exit does: what it started is killed and its scratch folder removed (derivls.base.bounded's atexit).
    The handler before is put back after (cli.main also runs inside other programs: the tests)."""
    import signal

    from derivls.base.children import set_exit_on_term

    previous = signal.getsignal(signal.SIGTERM)
    set_exit_on_term()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if getattr(args, "no_cache", False):
        from derivls.project.opener import disable_cache

        disable_cache()
    try:
        if args.command == "serve":
            return run_serve(args)
        if args.command == "check":
            from derivls.cli.check import run_check, run_check_compile

            if getattr(args, "compile", False):
                with _exit_on_term():
                    return run_check_compile(args, sys.stdout)
            return run_check(args, sys.stdout)
        if args.command == "dump":
            return run_dump(args, sys.stdout)
        if args.command == "daemon":
            from derivls.cli.daemon import run_daemon

            return run_daemon(args)
        if args.command == "cache":
            from derivls.cli.cache import run_cache

            return run_cache(args)
        if args.command == "gradcheck":
            from derivls.cli.gradcheck import run_gradcheck

            with _exit_on_term():
                return run_gradcheck(args, sys.stdout)

        if args.command == "explain":
            from derivls.cli.explain import run_explain

            return run_explain(args, sys.stdout)
        if args.command == "codegen":
            from derivls.cli.codegen import run_codegen

            return run_codegen(args, sys.stdout)
    except UsageError as e:
        sys.stderr.write(error_line(args.command, str(e)) + "\n")
        if args.command == "check" and getattr(args, "format", None) == "lintrunner":
            from derivls.cli.lintmessages import failure

            sys.stdout.write(failure(str(e)))  # lintrunner shows it as a general linter failure
            return EXIT_OK
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    parser.print_help()
    return EXIT_USAGE


__all__ = ["build_parser", "main", "run_command"]
