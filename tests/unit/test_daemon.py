"""`derivls check --daemon` and `derivls daemon`: the resident check answers what `derivls check` answers,
follows edits of every input, stays private to its user, and goes away (idle, stopped, killed, stale)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from derivls.cli import commandline as cli
from derivls.daemon import address, serve
from tests.unit.test_cli import BAD, GOOD, NATIVE  # (the same toy checkout as the CLI tests)

DERIVATIVES = "tools/autograd/derivatives.yaml"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "pytorch"
    (root / "tools" / "autograd").mkdir(parents=True)
    native = root / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    (native / "native_functions.yaml").write_text(NATIVE)
    (root / DERIVATIVES).write_text(BAD)
    return root


@pytest.fixture
def env(tmp_path: Path):
    """An environment of its own (cache folder, so a daemon of its own), whose daemon is gone after the test. The
    cache folder is a short one of /tmp: the daemon's socket is then in it (pytest's tmp_path can be too deep for
    a socket path: the daemon would listen in /tmp/derivls-daemon-<uid>, as test_a_cache_folder_too_deep... shows)."""
    import shutil
    import tempfile

    short = tempfile.mkdtemp(prefix="derivls-test-", dir="/tmp")
    cache = Path(short) / "cache"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DERIVLS_")}
    environ["DERIVLS_CACHE_DIR"] = str(cache)
    yield environ
    subprocess.run([sys.executable, "-m", "derivls", "daemon", "stop"], env=environ, capture_output=True, timeout=60)
    for lock in (cache / "daemon").glob("*.lock") if (cache / "daemon").is_dir() else ():
        pid = lock.read_text().strip()
        if pid.isdigit():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
    shutil.rmtree(short, ignore_errors=True)


def derivls(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "derivls", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def status(env: dict[str, str]) -> dict[str, object] | None:
    old = os.environ.copy()
    os.environ.clear()
    os.environ.update(env)
    try:
        from derivls.daemon.client import ask

        return ask(address.socket_path(), {"status": True}, timeout=10)
    finally:
        os.environ.clear()
        os.environ.update(old)


def daemon_pid(env: dict[str, str]) -> int:
    found = status(env)
    assert found is not None, "no daemon answers"
    return int(found["pid"])  # type: ignore[call-overload]


def gone(pid: int, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True  # (a zombie: exited, not yet reaped by whoever adopted it)
        except (ProcessLookupError, FileNotFoundError):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("fmt", ["text", "json", "github", "lintrunner"])
def test_the_daemon_prints_what_the_check_prints_in_every_format(checkout, env, fmt):
    here = derivls("check", DERIVATIVES, "--format", fmt, env=env, cwd=checkout)
    first = derivls("check", DERIVATIVES, "--format", fmt, "--daemon", env=env, cwd=checkout)
    again = derivls("check", DERIVATIVES, "--format", fmt, "--daemon", env=env, cwd=checkout)
    assert "started a check daemon" in first.stderr
    for run in (first, again):
        assert (run.returncode, run.stdout) == (here.returncode, here.stdout)
    assert again.stderr == here.stderr
    assert status(env)["served"] == 2  # type: ignore[index]


def test_an_edit_between_checks_is_what_a_fresh_check_of_the_new_text_says(checkout, env):
    derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    path = checkout / DERIVATIVES
    for text in (GOOD, BAD.replace("othr", "other"), "\n\n" + BAD, GOOD + "  result: auto_linear\n", BAD):
        path.write_text(text)
        fresh = derivls("check", DERIVATIVES, env=env, cwd=checkout)
        warm = derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
        assert (warm.returncode, warm.stdout) == (fresh.returncode, fresh.stdout)
    assert status(env)["opened"] == 1  # type: ignore[index]


def test_a_changed_native_functions_yaml_opens_the_project_again(checkout, env):
    derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    native = checkout / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    native.write_text(NATIVE.split("- func: mul")[0])  # mul.Tensor is gone
    warm = derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    fresh = derivls("check", DERIVATIVES, env=env, cwd=checkout)
    assert (warm.returncode, warm.stdout) == (fresh.returncode, fresh.stdout)
    assert "mul.Tensor" in warm.stdout
    assert status(env)["opened"] == 2  # type: ignore[index]


def test_usage_errors_come_back_as_the_check_gives_them(checkout, env):
    derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    for args in (
        ("nothing/derivatives.yaml",),
        (DERIVATIVES, "--format", "xml"),
        (DERIVATIVES, "--torch-version", "x"),
    ):
        here = derivls("check", *args, env=env, cwd=checkout)
        warm = derivls("check", *args, "--daemon", env=env, cwd=checkout)
        assert (warm.returncode, warm.stdout, warm.stderr) == (here.returncode, here.stdout, here.stderr)
        assert warm.returncode == 2


def test_no_cache_and_since_are_run_by_the_client_not_the_daemon(checkout, env):
    derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    run = derivls("check", DERIVATIVES, "--daemon", "--no-cache", env=env, cwd=checkout)
    assert run.returncode == 1 and "othr" in run.stdout
    since = derivls("check", DERIVATIVES, "--daemon", "--since", "HEAD", env=env, cwd=checkout)
    assert since.returncode == 2 and "git" in since.stderr  # (not a repository: the command's own message)
    assert status(env)["served"] == 1  # type: ignore[index]


def test_a_warm_answer_imports_neither_the_parser_nor_the_analysis_in_the_client(checkout, env):
    derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    probe = (
        "import sys; from derivls.__main__ import main; sys.argv = ['derivls', 'check', sys.argv[1], '--daemon'];"
        "code = main(); print(sorted(m for m in sys.modules if m.startswith('derivls')), file=sys.stderr); "
        "sys.exit(code)"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe, DERIVATIVES], capture_output=True, text=True, cwd=checkout, env=env, timeout=60
    )
    assert run.returncode == 1 and "othr" in run.stdout
    loaded = run.stderr.strip().splitlines()[-1]
    assert "derivls.daemon.client" in loaded
    for heavy in ("derivls.cli.commandline", "derivls.cli.check", "derivls.project.opener", "derivls.derivatives"):
        assert f"'{heavy}'" not in loaded


def test_the_socket_is_the_users_alone(checkout, env):
    derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    folder = Path(env["DERIVLS_CACHE_DIR"]) / "daemon"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (sock,) = folder.glob("*.sock")
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert sock.stat().st_uid == os.geteuid()


def test_a_peer_of_the_same_user_is_recognised():
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert serve.same_user(a)


def test_daemon_status_start_and_stop(env):
    assert derivls("daemon", "status", env=env).returncode == 1
    started = derivls("daemon", "start", env=env)
    assert started.returncode == 0 and "running (pid" in started.stdout
    pid = daemon_pid(env)
    assert "running (pid" in derivls("daemon", "status", env=env).stdout
    assert derivls("daemon", "start", env=env).stdout.startswith(f"derivls daemon: running (pid {pid},")
    stopped = derivls("daemon", "stop", env=env)
    assert stopped.stdout == f"derivls daemon: stopped (pid {pid})\n"
    assert gone(pid)
    assert list((Path(env["DERIVLS_CACHE_DIR"]) / "daemon").glob("*.sock")) == []
    assert derivls("daemon", "stop", env=env).stdout == "derivls daemon: not running\n"


def test_an_idle_daemon_stops_by_itself(env):
    env = {**env, "DERIVLS_DAEMON_IDLE": "1"}
    assert derivls("daemon", "start", env=env).returncode == 0
    pid = daemon_pid(env)
    assert gone(pid, 30)
    assert list((Path(env["DERIVLS_CACHE_DIR"]) / "daemon").glob("*.sock")) == []


def test_a_killed_daemon_is_replaced_at_the_next_check(checkout, env):
    derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    pid = daemon_pid(env)
    os.kill(pid, signal.SIGKILL)
    assert gone(pid)
    run = derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    assert run.returncode == 1 and "othr" in run.stdout and "started a check daemon" in run.stderr
    assert daemon_pid(env) != pid


def test_a_second_daemon_for_the_same_address_leaves_the_first_serving(env):
    derivls("daemon", "start", env=env)
    pid = daemon_pid(env)
    path = next((Path(env["DERIVLS_CACHE_DIR"]) / "daemon").glob("*.sock"))
    second = subprocess.run(
        [sys.executable, "-P", "-m", "derivls.cli.daemon", str(path)],
        env={**env, "DERIVLS_DAEMON_LOCK_SECONDS": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 0 and "another daemon holds this address" in second.stderr
    assert daemon_pid(env) == pid


def test_without_a_usable_daemon_folder_the_check_runs_in_the_client(checkout, env, tmp_path):
    not_a_folder = tmp_path / "cache-file"
    not_a_folder.write_text("")
    env = {**env, "DERIVLS_CACHE_DIR": str(not_a_folder)}
    run = derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    assert run.returncode == 1 and "othr" in run.stdout
    assert "not a folder" in run.stderr and "checking in this process" in run.stderr


def test_a_cache_folder_too_deep_for_a_socket_gets_one_in_a_short_private_folder(monkeypatch, tmp_path):
    # a socket path is at most 108 bytes: a test's cache folder (pytest-of-root/pytest-156/...) or a long HOME
    deep = tmp_path / ("x" * 90)
    monkeypatch.setenv("DERIVLS_CACHE_DIR", str(deep))
    monkeypatch.setenv("TMPDIR", str(tmp_path / ("y" * 90)))  # (too deep as well: /tmp is next)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    path = address.socket_path()
    assert len(os.fsencode(path)) <= address.MAX_PATH
    folder = os.path.dirname(path)
    assert folder == f"/tmp/derivls-daemon-{os.geteuid()}"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700 and os.stat(folder).st_uid == os.geteuid()
    monkeypatch.setenv("DERIVLS_CACHE_DIR", str(deep) + "z")  # another cache folder: another daemon
    assert address.socket_path() != path
    with contextlib.suppress(OSError):
        os.rmdir(folder)  # (when no daemon of this user uses it)


def test_a_link_planted_where_the_short_folder_goes_is_passed_over_for_the_next_base(monkeypatch):
    import shutil
    import tempfile

    tmp_path = Path(tempfile.mkdtemp(prefix="dl-", dir="/tmp"))  # (short: a socket path holds 108 bytes)
    runtime, temp = tmp_path / "run", tmp_path / "tmp"
    runtime.mkdir()
    temp.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    name = f"derivls-daemon-{os.geteuid()}"
    (runtime / name).symlink_to(target)  # (another user's link in a shared folder)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    try:
        assert address.short_folder("a long path") == str(temp / name)
        assert os.listdir(target) == []  # nothing made through the link
        (temp / name).rmdir()
        (temp / name).symlink_to(target)
        monkeypatch.setattr(address.os.path, "isabs", lambda b: b != "/tmp")  # (no /tmp to fall back on)
        with pytest.raises(address.Unreachable, match="is a link.*; .*is a link"):
            address.short_folder("a long path")
    finally:
        shutil.rmtree(tmp_path)


def test_a_daemon_whose_code_changed_says_so_and_stops():
    daemon = serve.Daemon("/nonexistent", 100, cli)
    daemon.fingerprint = "older code"
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        address.send(b, {"argv": ["check"], "cwd": "/"})
        daemon.answer(a)
        assert address.receive(b, address.MAX_REPLY) == {
            "stale": "derivls's code changed on disk since this daemon started"
        }
    assert daemon.stopping


@pytest.mark.parametrize(
    "request_", [[1, 2], {"argv": "check", "cwd": "/"}, {"argv": ["check"], "cwd": 3}, {"argv": [1], "cwd": "/"}]
)
def test_a_malformed_request_is_refused(request_):
    daemon = serve.Daemon("/nonexistent", 100, cli)
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        address.send(b, request_)
        with pytest.raises(ValueError):
            daemon.answer(a)


def test_a_request_over_the_size_bound_is_refused_unread():
    daemon = serve.Daemon("/nonexistent", 100, cli)
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        b.sendall((address.MAX_MESSAGE + 1).to_bytes(4, "big"))
        with pytest.raises(ValueError, match="at most"):
            daemon.answer(a)


def test_the_address_depends_on_the_derivls_environment_but_not_the_parent_pid():
    base = {"HOME": "/h"}
    assert address.identity(base) == address.identity({**base, "DERIVLS_PARENT_PID": "12"})
    assert address.identity(base) != address.identity({**base, "DERIVLS_TORCH_INCLUDE": "/t"})


def trickle(path: str, stop: threading.Event, seconds: float) -> str:
    """A slow sender: a request's header announcing 1000 bytes, then one byte every 0.1 s. Returns why it ended:
    "stopped" (told to), "dropped" (the daemon closed the connection) or "cap" (`seconds` passed)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        deadline = time.monotonic() + seconds
        try:
            sock.sendall((1000).to_bytes(4, "big"))
            while time.monotonic() < deadline:
                if stop.is_set():
                    return "stopped"
                sock.sendall(b" ")
                time.sleep(0.1)
        except OSError:
            return "dropped"
    return "cap"


def socket_of(env: dict[str, str]) -> str:
    (sock,) = (Path(env["DERIVLS_CACHE_DIR"]) / "daemon").glob("*.sock")
    return str(sock)


def test_a_slow_sender_holds_up_no_other_client(checkout, env):
    env = {**env, "DERIVLS_DAEMON_REQUEST_SECONDS": "600"}  # (so that only the daemon's design can answer first)
    derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    stop, ended = threading.Event(), []  # type: ignore[var-annotated]
    sender = threading.Thread(target=lambda: ended.append(trickle(socket_of(env), stop, 40)))
    sender.start()
    try:
        time.sleep(0.3)  # (the slow request is under way)
        run = derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    finally:
        stop.set()
        sender.join()
    assert run.returncode == 1 and "othr" in run.stdout and "checking in this process" not in run.stderr
    assert ended == ["stopped"]  # answered while the slow sender was still sending
    assert status(env)["served"] == 2  # type: ignore[index]


def test_a_request_not_complete_within_its_bound_is_dropped_whole(checkout, env):
    env = {**env, "DERIVLS_DAEMON_REQUEST_SECONDS": "0.5"}  # (a byte every 0.1 s: a per-receive bound never ends it)
    derivls("daemon", "start", env=env)
    assert trickle(socket_of(env), threading.Event(), 30) == "dropped"
    log = Path(socket_of(env) + ".log").read_text()
    assert "a request was dropped: not complete within 0.5 s" in log
    assert status(env) is not None


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_an_at_file_that_is_not_a_regular_file_is_refused_unopened(checkout, env, kind):
    derivls("daemon", "start", env=env)
    if kind == "fifo":
        os.mkfifo(checkout / "paths")
        name, what = "paths", "a FIFO (named pipe)"
    else:
        name, what = "/dev/zero", "a character device"
    run = derivls("check", f"@{name}", "--daemon", env=env, cwd=checkout)
    assert (run.returncode, run.stdout) == (2, "")
    assert (
        run.stderr == f"derivls check: error: @{name}: the paths file {name} is {what}, not a regular file; refused.\n"
    )
    assert status(env)["served"] == 1  # type: ignore[index]


_TERM_IN_THE_PARSER = """
import os, signal, sys, time
import derivls.cli.commandline as cli

real = cli.build_parser

def build_parser(command=None):
    parser = real(command)

    def parse_args(argv):  # a SIGTERM that arrives while the parser works (as in open() of an @FILE)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
        return real(command).parse_args(argv)

    parser.parse_args = parse_args
    return parser

cli.build_parser = build_parser
from derivls.daemon import serve
sys.exit(serve.main([sys.argv[1]], cli))
"""


def test_the_first_sigterm_stops_the_daemon_even_inside_the_parser(checkout, env):
    from derivls.daemon.client import ask

    folder = Path(env["DERIVLS_CACHE_DIR"]) / "daemon"
    folder.mkdir(parents=True, mode=0o700)
    path = str(folder / "t.sock")
    daemon = subprocess.Popen([sys.executable, "-c", _TERM_IN_THE_PARSER, path], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(path) and daemon.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        reply = ask(path, {"argv": ["check", DERIVATIVES], "cwd": str(checkout)}, timeout=60)
        assert reply is None  # (not a reply with exit status 143: the signal was not taken for a usage error)
        assert daemon.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        daemon.kill()
        daemon.wait()
    assert not os.path.exists(path)


def test_cache_clear_stops_the_daemon(checkout, env):
    derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    pid = daemon_pid(env)
    cleared = derivls("cache", "--clear", env=env)
    assert f"{env['DERIVLS_CACHE_DIR']}: stopped 1 check daemon\n" in cleared.stdout
    assert gone(pid)
    assert derivls("daemon", "status", env=env).stdout == "derivls daemon: not running\n"
    run = derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    assert run.returncode == 1 and "started a check daemon" in run.stderr


def test_a_daemon_whose_folder_is_removed_stops_by_itself(env):
    import shutil

    derivls("daemon", "start", env=env)
    pid = daemon_pid(env)
    shutil.rmtree(Path(env["DERIVLS_CACHE_DIR"]) / "daemon")  # (what an older `cache --clear` or a user does)
    assert gone(pid)


def test_a_request_sent_in_time_while_a_check_runs_is_answered(monkeypatch, tmp_path):
    # B sends its whole request during A's check, which outlasts the request bound: B's time is not spent
    monkeypatch.setattr(serve, "request_seconds", lambda: 0.3)
    daemon = serve.Daemon("/nonexistent", 100, cli)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = str(tmp_path / "d.sock")
    listener.bind(path)
    listener.listen(4)
    a, b = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)
    a.connect(path)
    b.connect(path)

    def respond(request):
        if request.get("argv") == ["a"]:
            address.send(b, {"argv": ["b"], "cwd": "/"})
            time.sleep(1.0)  # (a check longer than the request bound)
        if request.get("stop"):
            daemon.stopping = True
        return {"code": 0, "stdout": request.get("argv", ["stop"])[0], "stderr": ""}

    monkeypatch.setattr(daemon, "respond", respond)
    address.send(a, {"argv": ["a"], "cwd": "/"})
    server = threading.Thread(target=daemon.serve, args=(listener,))
    server.start()
    try:
        with a, b:
            a.settimeout(30)
            b.settimeout(30)
            assert address.receive(a, address.MAX_REPLY)["stdout"] == "a"  # type: ignore[index]
            assert address.receive(b, address.MAX_REPLY)["stdout"] == "b"  # type: ignore[index]
    finally:
        with socket.socket(socket.AF_UNIX) as stop:
            stop.connect(path)
            address.send(stop, {"stop": True})
            stop.settimeout(30)
            address.receive(stop, address.MAX_REPLY)
        server.join(30)
        listener.close()
    assert not server.is_alive()


def test_a_daemon_too_busy_to_answer_is_said_running_and_stop_stops_it(env):
    env = {**env, "DERIVLS_DAEMON_ASK_SECONDS": "0.5"}
    derivls("daemon", "start", env=env)
    pid = daemon_pid(env)
    os.kill(pid, signal.SIGSTOP)  # (it answers nothing, as in a long check)
    try:
        assert derivls("daemon", "status", env=env).stdout == (
            f"derivls daemon: running (pid {pid}) but busy: no answer within 0.5 s\n"
        )
        assert derivls("daemon", "stop", env=env).stdout == f"derivls daemon: stopped (pid {pid}, which was busy)\n"
    finally:
        os.kill(pid, signal.SIGCONT)
    assert gone(pid)
    assert derivls("daemon", "status", env=env).stdout == "derivls daemon: not running\n"


def test_an_at_file_named_inside_an_at_file_is_vetted_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkfifo("pipe")
    Path("list").write_text("tools/autograd/derivatives.yaml\n@pipe\n")
    Path("fine").write_text("tools/autograd/derivatives.yaml\n")
    assert serve.argument_file_refusal(["check", "@list"]) == (
        "@pipe: the paths file pipe is a FIFO (named pipe), not a regular file; refused"
    )
    assert serve.argument_file_refusal(["check", "@fine", "@missing", "--format", "json"]) is None


def test_a_client_gone_before_its_reply_leaves_the_daemon_serving(checkout, env):
    derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    pid = daemon_pid(env)
    for _ in range(3):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(socket_of(env))
            address.send(sock, {"argv": ["check", DERIVATIVES], "cwd": str(checkout)})
        # (closed at once: the reply finds no reader)
    run = derivls("check", DERIVATIVES, "--daemon", env=env, cwd=checkout)
    assert run.returncode == 1 and "started a check daemon" not in run.stderr
    assert daemon_pid(env) == pid


def test_a_client_slow_to_read_a_long_reply_holds_up_no_other(monkeypatch, tmp_path):
    daemon = serve.Daemon("/nonexistent", 100, cli)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = str(tmp_path / "d.sock")
    listener.bind(path)
    listener.listen(4)

    def run(argv, cwd):
        return {"code": 0, "stdout": argv[0] * (8 << 20), "stderr": ""}

    monkeypatch.setattr(daemon, "run", run)
    server = threading.Thread(target=daemon.serve, args=(listener,))
    server.start()
    a, b = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)
    try:
        with a, b:
            a.connect(path)
            address.send(a, {"argv": ["a"], "cwd": "/"})  # an 8 MB reply, which A does not read yet
            time.sleep(0.3)
            b.connect(path)
            b.settimeout(30)
            address.send(b, {"argv": ["b"], "cwd": "/"})
            assert address.receive(b, address.MAX_REPLY)["stdout"] == "b" * (8 << 20)  # type: ignore[index]
            a.settimeout(30)
            assert address.receive(a, address.MAX_REPLY)["stdout"] == "a" * (8 << 20)  # type: ignore[index]
    finally:
        with socket.socket(socket.AF_UNIX) as stop:
            stop.connect(path)
            address.send(stop, {"stop": True})
            stop.settimeout(30)
            address.receive(stop, address.MAX_REPLY)
        server.join(30)
        listener.close()
    assert not server.is_alive()
