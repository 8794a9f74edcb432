"""What one check may cost: the largest tensor a sample may have and the largest Jacobian a check may build, the
seconds a check may take (time_limit), and the exceptions that stop a check (check_unit says why)."""

# A dense gradcheck builds a (numel in) x (numel out) Jacobian and runs the op once per input element: samples
# with a larger tensor are not used, and a check whose Jacobian would be larger is not run.
MAX_NUMEL = 4096
MAX_JACOBIAN = 2_000_000
CHECK_SECONDS = 120  # one gradcheck (a sample, an input, a kind) taking longer is stopped


class TooLarge(Exception):
    pass


class TooSlow(Exception):
    pass


class NotDeterministic(Exception):
    pass


class FormulaNotImplemented(Exception):
    pass


class NotFinite(Exception):
    pass


class GaugeDependent(Exception):
    pass


class Unstable(Exception):
    """Finite differences are not reliable at some elements of a sample made with special values (how many)."""


def time_limit(seconds):
    """A context stopping its body with TooSlow after `seconds` (SIGALRM: the child runs checks in its main
    thread; elsewhere no limit)."""
    import contextlib
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def limit():
        def stop(signum, frame):
            raise TooSlow()

        previous = signal.signal(signal.SIGALRM, stop)
        signal.alarm(seconds)
        try:
            yield
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)

    return limit()
