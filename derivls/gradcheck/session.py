"""A gradcheck session that stays alive: the child with `--serve` in the chosen Python, torch, op_db and the reach
index loaded once, samples found once per unit (docs/gradcheck.md, "The session").

    session = sessions.get(python)          # one per (Python, torch build); nothing started yet
    session.start()                         # in the background (its keeper thread); session.ready.wait()
    with session.use() as conn:             # one run at a time; raises SessionUnavailable when not warm
        conn.send({"op": "prepare", ...})   # while g++ builds the extension
        conn.send({"op": "check", ...})
        for event in conn.events(): ...     # up to {"event": "done"}; SessionDied if it died meanwhile

The process is started by derivls.base.bounded (its own process group, RLIMIT_AS, PR_SET_PDEATHSIG) from the
session's keeper thread: PDEATHSIG fires when the *thread* that forked it ends, so a short-lived thread (a
run's) must never start it. It is restarted when it dies after it was ready (at most MAX_RESTARTS a
minute), restarted when its RSS is above `rss_bound` after a run, stopped after `idle_seconds` unused.

Its working folder and TMPDIR is a folder of this process's scratch folder, removed when the session stops;
a guard process (a few lines of Python, in a group of its own, holding the read end of a pipe only this
process writes to) removes it and kills the session's group when this process dies, even by SIGKILL.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from derivls.base import bounded
from derivls.base.bounded import GB, Limits
from derivls.base.children import exit_if_orphaned

IDLE_SECONDS = 600.0
RSS_BOUND = 2 * GB
START_SECONDS = 120.0  # importing torch and op_db: ~3-5 s on a quiet machine
MAX_RESTARTS = 3  # a minute: a session that keeps dying is left stopped (the one-shot path runs)
CHILD = Path(__file__).with_name("child") / "__main__.py"

# the guard: waits for end of input (this process gone, or the session stopped), then kills the session's
# process group and removes its folder (this process's scratch folder that holds it has a guard of its own in the
# server: bounded.guard_scratch). argv: folder; stdin lines: the session's pid
GUARD = (
    "import os, shutil, signal, sys\n"
    "pids = [int(line) for line in sys.stdin if line.strip().isdigit()]\n"
    "for pid in pids:\n"
    "    try:\n"
    "        os.killpg(pid, signal.SIGKILL)\n"
    "    except OSError:\n"
    "        pass\n"
    "shutil.rmtree(sys.argv[1], ignore_errors=True)\n"
)


class SessionUnavailable(Exception):
    """The session is not warm (starting, stopped, or failed to start): run the one-shot path."""


class SessionDied(Exception):
    """The session ended during a run (it is restarted; the run's result is lost)."""


class UnitTimedOut(SessionDied):
    """One unit's checks passed their bound (`seconds`): the session was killed (and is restarted); `unit` is that
    unit's id. The units answered before it stand: the caller answers it and checks the rest again."""

    def __init__(self, unit: str, seconds: float) -> None:
        from derivls.gradcheck.runner import ran_out

        super().__init__(f"{unit}: {ran_out(seconds)}")
        self.unit = unit
        self.seconds = seconds


def enabled() -> bool:
    """DERIVLS_GRADCHECK_SESSION=0 in the user's environment disables sessions (the one-shot path runs)."""
    return _flag("DERIVLS_GRADCHECK_SESSION")


def _flag(name: str) -> bool:
    """An on/off switch in the user's environment: on unless 0, false, no or off."""
    return os.environ.get(name, "1").strip() not in ("0", "false", "no", "off")


def jit_enabled() -> bool:
    """DERIVLS_GRADCHECK_JIT=0 in the user's environment: the session has no JIT (every run builds with g++)."""
    return _flag("DERIVLS_GRADCHECK_JIT")


def session_limits() -> Limits:
    """Address space 8 GB (as the one-shot child), CPU an hour in all (it then dies and is restarted); the
    wall-clock bound is each run's (run_seconds) and each unit's (runner.unit_seconds). Memory: the user's
    DERIVLS_GRADCHECK_MEMORY_MB (as the one-shot child's)."""
    base = bounded.env_limits("DERIVLS_GRADCHECK", 3600, 8 * GB)
    return Limits(3600, base.memory, cpu_seconds=3600)


def run_seconds(units: int) -> float:
    """A run's wall-clock bound in the session: 60 s (the samples found, the JIT's definitions) and each unit's
    bound (runner.SESSION_UNIT_SECONDS: 120 s, or DERIVLS_GRADCHECK_SECONDS)."""
    from derivls.gradcheck.runner import SESSION_UNIT_SECONDS, unit_seconds

    return 60.0 + unit_seconds(SESSION_UNIT_SECONDS) * max(units, 1)


class Session:
    """One live child with `--serve` (see the module's doc). `command` replaces the child (tests' stand-in).

    While it starts it is sent the reach index (`send_reach`: the real child only, by default): the one kept for
    its torch build, or, for a build's first session, the one `indexer` (the one-shot child, no units) makes beside
    the start, then kept. So no run waits ~10 s for the index."""

    def __init__(
        self,
        python: str | None = None,
        *,
        command: list[str] | None = None,
        idle_seconds: float = IDLE_SECONDS,
        rss_bound: int = RSS_BOUND,
        limits: Limits | None = None,
        on_state: Callable[[str], None] | None = None,
        jit: bool | None = None,
        send_reach: bool | None = None,
        indexer: list[str] | None = None,
    ) -> None:
        self.python = python or sys.executable
        self.use_jit = (command is None and jit_enabled()) if jit is None else jit  # (a stand-in has none)
        # the reach index sent while it starts (a stand-in takes no prepare), made by `indexer` when none is kept
        self.send_reach = command is None if send_reach is None else send_reach
        self.indexer = indexer or [self.python, "-I", str(CHILD)]
        self.command = command or [self.python, "-I", str(CHILD), "--serve"]
        self.idle_seconds = idle_seconds
        self.rss_bound = rss_bound
        self.limits = limits or session_limits()
        self.on_state = on_state
        self.ready = threading.Event()  # set once the child said "ready" (cleared when it stops)
        self.state = "stopped"  # stopped, starting, ready, failed
        self.error: str | None = None  # why it failed to start (a set-up error: the one-shot path says it too)
        self.torch_version: str | None = None
        self.starts = 0
        self.runs = 0  # runs that used it (Session.use)
        self.jit_runs = 0  # of them, runs whose formulas its JIT defined (no g++ build)
        self.reach_sent = False  # whether the running process was sent the reach index (a new process was not)
        self.jit: dict[str, Any] = {"ready": False, "reason": "not started"}  # the running process's JIT
        self.restarts: list[float] = []
        self.last_used = time.monotonic()
        self.folder: str | None = None
        self._process: bounded.Bounded | None = None
        self._guard: subprocess.Popen[Any] | None = None
        self._indexer: bounded.Bounded | None = None  # a one-shot child making the reach index while it starts
        self._events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._run = threading.Lock()  # one run at a time
        self._orders: queue.Queue[str] = queue.Queue()
        self._closed = False
        self._keeper = threading.Thread(target=self._keep, name="derivls-gradcheck-session", daemon=True)
        self._keeper.start()

    # --- what callers do -------------------------------------------------------------------------

    def start(self) -> None:
        """Start it in the background (nothing when it runs or is starting)."""
        self._orders.put("start")

    def stop(self) -> None:
        self._orders.put("stop")

    def close(self) -> None:
        """Stop it and its keeper (this process's exit)."""
        self._closed = True
        self._orders.put("close")
        self._keeper.join(15)
        self._stop_now()

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None and process.popen.poll() is None else None

    def warm(self) -> bool:
        return self.ready.is_set() and self.pid is not None

    def describe(self) -> dict[str, Any]:
        """What the server's status reports of it (tests and the bench)."""
        return {
            "state": self.state,
            "pid": self.pid,
            "starts": self.starts,
            "runs": self.runs,
            "torchVersion": self.torch_version,
            "error": self.error,
            "jit": dict(self.jit),
            "jitRuns": self.jit_runs,
        }

    def jit_ready(self) -> bool:
        return bool(self.jit.get("ready")) and not self.jit.get("broken")

    def jit_broken(self) -> None:
        """Its JIT rejected or failed to link some code (Cling's state is not trusted after either): no more JIT in
        this process; it is restarted when the run ends (the next runs take g++ until the new one is ready)."""
        self.jit = {**self.jit, "broken": True, "reason": "a definition was rejected or did not link"}
        self._orders.put("restart")

    def rss(self) -> int:
        """The session's resident memory in bytes (0 when not running)."""
        pid = self.pid
        if pid is None:
            return 0
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        return 0

    @contextlib.contextmanager
    def use(self, wait: float = 0.0) -> Iterator[Connection]:
        """The session for one run (one at a time); SessionUnavailable when it is not warm within `wait` s."""
        if not self.ready.wait(wait) or self.pid is None:
            if self.state in ("stopped",):
                self.start()
            raise SessionUnavailable(self.error or f"the gradcheck session is {self.state}")
        if not self._run.acquire(timeout=max(wait, 0.0) or 0.01):
            raise SessionUnavailable("the gradcheck session is busy")
        try:
            self.last_used = time.monotonic()
            self.runs += 1
            self._drain()
            yield Connection(self)
        finally:
            self.last_used = time.monotonic()
            self._run.release()
            if self.rss() > self.rss_bound:  # a restart gives the memory back; the next run waits for it
                self._orders.put("restart")

    def send_if_idle(self, message: dict[str, Any]) -> bool:
        """Send `message` (a `prepare`: its answer is not awaited, runs skip it) when the session is warm and no run
        holds it; not a run (not counted). False when it was not sent."""
        if not self.warm() or not self._run.acquire(blocking=False):
            return False
        try:
            Connection(self).send(message)
            self.last_used = time.monotonic()
            return True
        except SessionDied:
            return False
        finally:
            self._run.release()

    # --- the keeper thread: the only one that starts the child (PDEATHSIG is per thread) ------------

    def _keep(self) -> None:
        while True:
            try:
                order = self._orders.get(timeout=min(30.0, max(self.idle_seconds / 4, 0.05)))
            except queue.Empty:
                order = "tick"
            if order == "close":
                self._stop_now()
                return
            if order == "start" and self.pid is None and not self._closed:
                self._start_now()
            elif order == "stop":
                self._stop_now()
            elif order == "restart":
                self._stop_now()
                self._start_now()
            elif order == "died":
                self._stop_now()
                now = time.monotonic()
                self.restarts = [t for t in self.restarts if now - t < 60] + [now]
                if len(self.restarts) <= MAX_RESTARTS and not self._closed:
                    self._start_now()
                else:
                    self._set("failed")
                    self.error = "the gradcheck session kept dying"
            elif order == "tick" and self.pid is not None and not self._run.locked():
                if time.monotonic() - self.last_used > self.idle_seconds:
                    self._stop_now()

    def _start_now(self) -> None:
        self._stop_now()
        self._set("starting")
        self.error = None
        self.reach_sent = False  # (else a restarted child makes the index itself: seconds of every OpInfo's samples)
        self.folder = tempfile.mkdtemp(prefix="torch-session-", dir=bounded.scratch_folder())
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")}
        env.setdefault("OMP_NUM_THREADS", "1")
        try:
            self._guard = subprocess.Popen(  # noqa: S603 (this Python, on the guard's own text)
                [sys.executable, "-I", "-c", GUARD, self.folder],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                text=True,
                cwd=self.folder,
                start_new_session=True,  # not killed with this process's group: it outlives a kill -9
            )
            self._process = bounded.spawn(
                self.command,
                self.limits,
                cwd=self.folder,
                scratch=self.folder,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as e:
            self.error = f"cannot start the gradcheck session: {e}"
            self._stop_now()
            self._set("failed")
            return
        reach_file, index = self._start_indexer(env) if self.send_reach else (None, None)
        assert self._guard.stdin is not None
        try:
            self._guard.stdin.write(f"{self._process.pid}\n")
            self._guard.stdin.flush()
        except OSError:
            pass
        self.starts += 1
        self.last_used = time.monotonic()
        events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._events = events
        process = self._process
        threading.Thread(target=self._read, args=(process, events), daemon=True).start()
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                event = events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                event = None
                self.error = f"the gradcheck session did not start in {START_SECONDS:.0f} s"
            if event is None:
                self.error = self.error or "the gradcheck session ended while starting"
                self._stop_now()
                self._set("failed")
                return
            if event.get("event") == "torch":
                self.torch_version = event.get("version")
            elif event.get("event") == "setup-error":
                self.error = str(event.get("message"))
                self._stop_now()
                self._set("failed")
                return
            elif event.get("event") == "ready":
                break
        self.jit = self._jit_init(process, events, deadline) if self.use_jit else {"ready": False, "reason": "off"}
        if self._process is not process:
            return
        if self.send_reach:
            self._send_reach(process, events, deadline, reach_file, index)
        if process.popen.poll() is not None:
            self.error = "the gradcheck session ended while starting"
            self._stop_now()
            self._set("failed")
            return
        self._set("ready")
        self.ready.set()

    def _jit_init(
        self, process: bounded.Bounded, events: queue.Queue[dict[str, Any] | None], deadline: float
    ) -> dict[str, Any]:
        """Make the process's JIT ready (derivls.gradcheck.jit; part of the start: ~10-15 s of parsing headers once).
        Its state: {"ready", "reason", "seconds"}; a JIT that is not ready leaves every run to g++."""
        from derivls.compile.toolchain import SetupError
        from derivls.gradcheck import jit as jitting

        started = time.monotonic()
        try:
            request = jitting.init_request(self.python)
        except (SetupError, OSError) as e:
            return {"ready": False, "reason": str(e)}
        stdin = process.popen.stdin
        try:
            assert stdin is not None
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
        except (OSError, ValueError):
            return {"ready": False, "reason": "the session ended"}
        while True:
            try:
                event = events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return {"ready": False, "reason": f"the JIT was not ready in {START_SECONDS:.0f} s"}
            if event is None:
                events.put(None)
                return {"ready": False, "reason": "the session ended"}
            if event.get("event") == "jit":
                state = {k: v for k, v in event.items() if k != "event"}
                state["seconds"] = round(time.monotonic() - started, 2)
                return state

    def _start_indexer(self, env: dict[str, str]) -> tuple[Path | None, dict[str, Any] | None]:
        """Where the reach index is kept and the kept index; when none is kept (a torch build's first session), a
        one-shot child (no units) starts making it, beside the session's own start (the JIT's parse): ~10 s of every
        OpInfo's samples that the first run would otherwise wait for. The index is read from it by _send_reach."""
        from derivls.gradcheck import reach

        path = reach.file_for(self.python)
        index = reach.load(path)
        if index is not None or path is None:
            return path, index
        try:
            self._indexer = bounded.spawn(
                self.indexer,
                self.limits,
                cwd=self.folder or bounded.scratch_folder(),
                scratch=self.folder,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            stdin = self._indexer.popen.stdin
            assert stdin is not None
            stdin.write(json.dumps({"units": [], "reach": None}) + "\n")
            stdin.close()  # (no second line: it ends once the index is sent)
        except (OSError, ValueError):
            self._stop_indexer()
        return path, None

    def _indexer_index(self, deadline: float) -> dict[str, Any] | None:
        """The index the indexer sends (None: it failed, or not by `deadline`); the indexer is stopped."""
        indexer = self._indexer
        if indexer is None:
            return None
        found: list[Any] = []

        def read() -> None:
            stdout = indexer.popen.stdout
            assert stdout is not None
            with contextlib.suppress(OSError, ValueError):
                for line in stdout:
                    with contextlib.suppress(ValueError):
                        event = json.loads(line)
                        if isinstance(event, dict) and event.get("event") == "reach-index":
                            found.append(event.get("index"))
                            return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(max(0.0, deadline - time.monotonic()))
        self._stop_indexer()
        return found[0] if found and isinstance(found[0], dict) else None

    def _stop_indexer(self) -> None:
        indexer, self._indexer = self._indexer, None
        if indexer is not None:
            indexer.kill()

    def _send_reach(
        self,
        process: bounded.Bounded,
        events: queue.Queue[dict[str, Any] | None],
        deadline: float,
        path: Path | None,
        index: dict[str, Any] | None,
    ) -> None:
        """Send the process the reach index (kept, or the indexer's, then kept) before it is ready, so that no run
        waits for it; without one (the indexer failed), the first run's process makes it, as before."""
        from derivls.gradcheck import reach

        if index is None:
            index = self._indexer_index(deadline)
            if index is None:
                return
            reach.save(path, index)
        stdin = process.popen.stdin
        try:
            assert stdin is not None
            stdin.write(json.dumps({"op": "prepare", "units": [], "reach": index}) + "\n")
            stdin.flush()
        except (OSError, ValueError):
            return
        while True:
            try:
                event = events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return
            if event is None:
                events.put(None)
                return
            if event.get("event") == "prepared":
                self.reach_sent = True
                return

    def _read(self, process: bounded.Bounded, events: queue.Queue[dict[str, Any] | None]) -> None:
        stdout = process.popen.stdout
        assert stdout is not None
        try:
            for line in stdout:
                try:
                    events.put(json.loads(line))
                except ValueError:
                    continue
        except (OSError, ValueError):
            pass
        events.put(None)
        if process is self._process and self.ready.is_set():  # died after it was ready: restart it
            self.ready.clear()
            self._orders.put("restart" if process.killed_for is not None else "died")

    def _stop_now(self) -> None:
        self.ready.clear()
        self._stop_indexer()
        process, self._process = self._process, None
        if process is not None:
            stdin = process.popen.stdin
            try:
                if stdin is not None:
                    stdin.write('{"op": "quit"}\n')
                    stdin.flush()
                    stdin.close()
                process.popen.wait(2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
            process.kill()
        guard, self._guard = self._guard, None
        if guard is not None:
            with contextlib.suppress(OSError):
                if guard.stdin is not None:
                    guard.stdin.close()  # the guard kills what is left of the group and removes the folder
            try:
                guard.wait(10)
            except subprocess.TimeoutExpired:
                guard.kill()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        if self.state != "failed":
            self._set("stopped")

    def _set(self, state: str) -> None:
        self.state = state
        if self.on_state is not None:
            try:
                self.on_state(state)
            except Exception:
                pass

    def _drain(self) -> None:
        """Drop what a cancelled run left unread (its events up to its `done`)."""
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                return
            if event is None:
                self._events.put(None)
                return

    def wait_restarted(self, old_pid: int | None, seconds: float) -> bool:
        """Whether a process other than `old_pid` (the one a run killed) is warm within `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.state == "failed" or self._closed:
                return False
            if self.warm() and self.pid not in (None, old_pid):
                return True
            time.sleep(0.05)
        return False

    def _kill_for_run(self) -> None:
        """A run over its bound, or cancelled: the child is killed (and restarted by the keeper)."""
        process = self._process
        if process is not None:
            process.kill(bounded.TIME)


class Connection:
    """The session during one run (Session.use)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def send(self, message: dict[str, Any]) -> None:
        process = self.session._process
        stdin = process.popen.stdin if process is not None else None
        if stdin is None:
            raise SessionDied("the gradcheck session is gone")
        try:
            stdin.write(json.dumps(message) + "\n")
            stdin.flush()
        except (OSError, ValueError) as e:
            raise SessionDied("the gradcheck session is gone") from e

    def events(
        self, seconds: float, cancel: threading.Event | None = None, unit_seconds: float | None = None
    ) -> Iterator[dict[str, Any]]:
        """The events of the check sent, up to and with its `done` (`prepared`, `unit-start` ones skipped). The
        session is killed (and restarted) when `seconds` pass or `cancel` is set first: SessionDied; or when one
        unit's checks (from its `unit-start`) pass `unit_seconds`: UnitTimedOut."""
        deadline = time.monotonic() + seconds
        events = self.session._events
        running: tuple[str, float] | None = None  # the unit being checked, since when
        while True:
            if cancel is not None and cancel.is_set():
                self.session._kill_for_run()
                raise SessionDied("cancelled")
            now = time.monotonic()
            if running is not None and unit_seconds is not None and now - running[1] > unit_seconds:
                self.session._kill_for_run()
                raise UnitTimedOut(running[0], unit_seconds)
            left = deadline - now
            if left <= 0:
                self.session._kill_for_run()
                raise SessionDied(f"the gradcheck session's run took over {seconds:.0f} s and was stopped")
            try:
                event = events.get(timeout=min(left, 0.2))
            except queue.Empty:
                exit_if_orphaned()  # (a worker running this whose server is gone: its SIGTERM lost or late)
                continue
            if event is None:
                events.put(None)
                raise SessionDied("the gradcheck session ended during the run")
            kind = event.get("event")
            if kind == "unit-start":
                running = (str(event.get("id")), time.monotonic())
                continue
            if kind == "unit":
                running = None
            if kind in ("prepared", "pong"):
                continue
            yield event
            if kind == "done":
                return


# --- one session per (Python, torch build) ------------------------------------------------------------

_sessions: dict[tuple[str, str], Session] = {}
_lock = threading.Lock()


def torch_build(python: str) -> str:
    """What identifies `python`'s torch build: its torch folder and version.py's modification time."""
    from derivls.gradcheck.runner import torch_folder

    folder = torch_folder(python)
    if folder is None:
        return ""
    try:
        return f"{folder}:{(folder / 'version.py').stat().st_mtime_ns}"
    except OSError:
        return str(folder)


def get(python: str | None, build: str | None = None) -> Session:
    """The session of `python` (default: this one) and its torch build (made, not started, when new)."""
    python = python or sys.executable
    key = (python, build if build is not None else torch_build(python))
    with _lock:
        found = _sessions.get(key)
        if found is None:
            found = _sessions[key] = Session(python)
            _register_exit()
        return found


def close_all() -> None:
    with _lock:
        found = list(_sessions.values())
        _sessions.clear()
    for session in found:
        session.close()


_exit_registered = False


def _register_exit() -> None:
    global _exit_registered
    if not _exit_registered:
        import atexit

        atexit.register(close_all)
        _exit_registered = True


__all__ = [
    "Connection",
    "Session",
    "SessionDied",
    "SessionUnavailable",
    "UnitTimedOut",
    "close_all",
    "enabled",
    "get",
    "run_seconds",
]
