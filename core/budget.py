"""The work one trace's analysis may do, whoever does it (README "Security model": budgets).

Traffic values are chosen by whoever can reach a monitored app, so every walker over them (JSON,
forms, multipart parts, XML and text, GraphQL documents and variables, headers, query parameters)
and every validator fed by them draws on one :class:`Budget` per trace:

* ``nodes`` — containers, leaves, pairs and GraphQL selections visited by the walkers;
* ``chars`` — characters of values handed to the text searches (the regexes run over each value);
* ``candidates`` — validator calls on candidates (``phonenumbers``, and the Luhn, SSN and IP checks
  of what a finder cut out of free text): the expensive part of free-text detection;
* ``cpu`` — CPU seconds of the thread since the budget was made (``time.thread_time``), read
  every :data:`CLOCK_EVERY` draws and by :meth:`Budget.in_time`.

Drawing never raises: a draw answers ``False`` once its own part is used up, or once the CPU time
is, and the walker or validator stops where it is; what was reached is analysed (the trace is
*partial*). ``reason`` names the first limit reached and ``refusals`` counts refused draws, so a
caller can tell which work was cut. Library code reaches the budget of the trace being analysed
through :func:`current` (a context variable set by :func:`budget_scope`), so the validators keep
their signatures; outside a scope :func:`current` answers :data:`UNLIMITED`, which never refuses.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar

from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded

__all__ = ["Budget", "TIME_LIMITS", "UNLIMITED", "budget_scope", "current"]

# A task's time limits: raised into the work itself, never to be taken for one trace's (or one
# spec's) error by a broad ``except Exception`` on the way up (catch these first and re-raise).
TIME_LIMITS = (SoftTimeLimitExceeded, TimeLimitExceeded)

# The thread's CPU clock is read every this many draws (a system call each: ~0.3 µs).
CLOCK_EVERY = 64


class Budget:
    """What one trace's analysis may still spend; see the module. Not thread-safe (one per trace)."""

    __slots__ = ("nodes", "chars", "candidates", "deadline", "reason", "refusals", "late", "_ticks")

    def __init__(self, *, nodes: int, chars: int, candidates: int, cpu_seconds: float):
        self.nodes = nodes
        self.chars = chars
        self.candidates = candidates
        self.deadline = time.thread_time() + cpu_seconds
        self.reason: str | None = None
        self.refusals = 0
        self.late = False
        self._ticks = CLOCK_EVERY

    @property
    def spent(self) -> bool:
        """Some limit was reached: the trace is partial."""
        return self.reason is not None

    def refuse(self, reason: str) -> bool:
        """Count a refusal for ``reason`` (also for a walker's own limit, e.g. GraphQL tokens); ``False``."""
        self.refusals += 1
        if self.reason is None:
            self.reason = reason
        return False

    def in_time(self) -> bool:
        """``False`` (for every draw from now on) once the thread's CPU clock passed the deadline."""
        if not self.late and time.thread_time() > self.deadline:
            self.late = True
            self.refuse("cpu")
        return not self.late

    def _tick(self) -> bool:
        self._ticks -= 1
        if self._ticks > 0:
            return not self.late
        self._ticks = CLOCK_EVERY
        return self.in_time()

    def take_nodes(self, count: int = 1) -> bool:
        """Visit ``count`` more nodes; ``False`` when nodes or time are used up."""
        if self.late or self.nodes < count:
            return self.refuse("cpu" if self.late else "nodes")
        self.nodes -= count
        return self._tick()

    def take_chars(self, count: int) -> bool:
        """Search ``count`` more characters of a value; ``False`` when characters or time are used up."""
        if self.late or self.chars < count:
            return self.refuse("cpu" if self.late else "chars")
        self.chars -= count
        return self._tick()

    def take_candidate(self) -> bool:
        """Validate one more candidate; ``False`` when candidates or time are used up."""
        if self.late or self.candidates < 1:
            return self.refuse("cpu" if self.late else "candidates")
        self.candidates -= 1
        return self._tick()


class _Unlimited(Budget):
    """The budget outside any scope: never refuses, never reads the clock, never changes."""

    def __init__(self):
        super().__init__(nodes=0, chars=0, candidates=0, cpu_seconds=0.0)

    @property
    def spent(self) -> bool:
        return False

    def refuse(self, reason: str) -> bool:
        return False

    def in_time(self) -> bool:
        return True

    def take_nodes(self, count: int = 1) -> bool:
        return True

    def take_chars(self, count: int) -> bool:
        return True

    def take_candidate(self) -> bool:
        return True


UNLIMITED: Budget = _Unlimited()
_current: ContextVar[Budget] = ContextVar("apiscope_budget", default=UNLIMITED)


def current() -> Budget:
    """The budget of the trace being analysed in this context (:data:`UNLIMITED` outside a scope)."""
    return _current.get()


@contextmanager
def budget_scope(budget: Budget):
    """Make ``budget`` what :func:`current` answers inside the ``with`` block."""
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)
