"""What one client of ``protocoder serve`` may cost: terminal size, open sessions, sign-in attempts.

Every browser session is an app process, and a terminal's size is the size of every screen
it draws: a websocket asking for 20000×20000 cells (or a resize message to 50000×50000) made
its process take gigabytes. Sign-in attempts each cost an scrypt when they reach one. So:

* the terminal size is clamped, on connect and on every resize, to :data:`MAX_COLUMNS` ×
  :data:`MAX_ROWS` (a 4K screen at a small font is about 480 × 135 cells);
* open sessions are capped per member (a team member's tabs) and in total; the page that
  would open one more says so instead;
* failed sign-in attempts are limited per client address and per member name, in a sliding
  window, checked before any hash is computed (successful ones do not count: twenty reviewers
  behind one proxy sign in within the same minute).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_COLUMNS = 500
"""The widest terminal a session gets (cells); wider requests are given this."""

MAX_ROWS = 200
"""The tallest terminal a session gets (rows)."""

MIN_COLUMNS, MIN_ROWS = 20, 5
"""The smallest terminal: zero or negative sizes are given this."""

DEFAULT_MAX_SESSIONS = 40
"""Open browser sessions at once, all members together: twenty reviewers and their spare tabs."""

DEFAULT_SESSIONS_PER_MEMBER = 3
"""Open browser sessions of one team member (each tab is an app process of its own)."""

SIGNIN_WINDOW = 60.0
"""Seconds over which sign-in attempts are counted."""

SIGNINS_PER_CLIENT = 10
"""Failed sign-in attempts one client address may make in :data:`SIGNIN_WINDOW`."""

SIGNINS_PER_NAME = 5
"""Failed sign-in attempts for one member name in :data:`SIGNIN_WINDOW`, from any client."""


def clamp_size(width: object, height: object) -> tuple[int, int]:
    """A terminal size a session may have: ``width`` × ``height`` (anything a client sent) within bounds."""

    def whole(value: object, default: int) -> int:
        if isinstance(value, bool):
            return default
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value == value and abs(value) < 1e9:  # not NaN, not infinite
            return int(value)
        if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 12:
            return int(value)
        return default

    columns = min(max(whole(width, 80), MIN_COLUMNS), MAX_COLUMNS)
    rows = min(max(whole(height, 24), MIN_ROWS), MAX_ROWS)
    return columns, rows


@dataclass
class Window:
    """Counts events per key over a sliding window; forgets keys whose events have all expired."""

    limit: int
    seconds: float = SIGNIN_WINDOW
    clock: Callable[[], float] = time.monotonic
    _events: dict[str, deque[float]] = field(default_factory=dict)

    def full(self, key: str) -> bool:
        """True when ``key`` had ``limit`` events in the window (the next must wait)."""
        times = self._events.get(key)
        if not times:
            return False
        while times and times[0] <= self.clock() - self.seconds:
            times.popleft()
        return len(times) >= self.limit

    def add(self, key: str) -> None:
        """Count one event for ``key``."""
        now = self.clock()
        if len(self._events) > 10_000:  # many keys (random names): drop the expired ones
            for stale in [k for k, times in self._events.items() if not times or times[-1] <= now - self.seconds]:
                del self._events[stale]
        self._events.setdefault(key, deque()).append(now)

    def retry_after(self, key: str) -> int:
        """Whole seconds until ``key`` may try again."""
        times = self._events.get(key)
        if not times:
            return 0
        return max(1, int(times[0] + self.seconds - self.clock()) + 1)


@dataclass
class SignInLimits:
    """Sign-in attempts per client address and per member name."""

    per_client: Window = field(default_factory=lambda: Window(SIGNINS_PER_CLIENT))
    per_name: Window = field(default_factory=lambda: Window(SIGNINS_PER_NAME))

    def refusal(self, client: str, name: str) -> tuple[str, int] | None:
        """Why an attempt from ``client`` for ``name`` is refused now, before any hash, and in how
        many seconds to retry; None when it may go on."""
        if self.per_client.full(client):
            return "too many failed sign-in attempts from this address", self.per_client.retry_after(client)
        if self.per_name.full(name):
            return f"too many failed sign-in attempts for {name}", self.per_name.retry_after(name)
        return None

    def failed(self, client: str, name: str) -> None:
        """Count a failed attempt (a link that was wrong, used or revoked) against both."""
        self.per_client.add(client)
        self.per_name.add(name)
