# SPDX-License-Identifier: Apache-2.0
"""One "now" for a test: a clock that moves only when the test moves it.

Pass it as ``ConductorService(clock=...)`` (the conductor's ``ctx.clock``,
which the lease engine reads) and ``create_app(clock=...)`` (the API's,
which the lease handler reads): a lease booked from now then starts in
the engine's run whatever the machine's load, and windows written as
``clock.later(3600)`` are an hour from the instant the test decided on.
A child process has the wall clock; tests of processes use it too.
"""

import datetime

from ferrum.objects import base


class Clock:
    """Naive UTC "now", whole seconds (as the API keeps windows)."""

    def __init__(self, now: datetime.datetime | None = None) -> None:
        self.now = (now or base.utcnow()).replace(microsecond=0)

    def __call__(self) -> datetime.datetime:
        return self.now

    def advance(self, seconds: float) -> datetime.datetime:
        """Move now forward by ``seconds``; returns the new now."""
        self.now += datetime.timedelta(seconds=seconds)
        return self.now

    def after(self, seconds: float) -> datetime.datetime:
        """The instant ``seconds`` after now (before, if negative)."""
        return self.now + datetime.timedelta(seconds=seconds)

    def later(self, seconds: float) -> str:
        """:meth:`after`, written as the API takes it (ISO 8601, Z)."""
        return self.after(seconds).isoformat() + 'Z'
