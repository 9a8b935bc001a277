# SPDX-License-Identifier: Apache-2.0
"""The one retry on ``409 placement.concurrent_update``.

Placement answers it when a generation (a provider's, or a consumer's)
moved between ferrum's read and its write. The cure is always the same:
read again, rebuild the write, send it again; so every write that carries
a generation goes through :func:`on_conflict`, with the budget of
``[placement] max_conflict_retries`` (:func:`attempts`). Any other 409 is
a refusal that reading again does not fix, and goes to the caller at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from oslo_config import cfg

from ferrum.placement import client as client_mod
from ferrum.placement import errors

T = TypeVar('T')


def attempts(conf: cfg.ConfigOpts) -> int:
    """Tries of one write: the first and ``[placement]
    max_conflict_retries`` more."""
    return int(conf.placement.max_conflict_retries) + 1


def is_concurrent_update(exc: Exception) -> bool:
    return (isinstance(exc, errors.PlacementConflict)
            and exc.error_code == client_mod.CONCURRENT_UPDATE)


def on_conflict(call: Callable[[int], T], tries: int,
                pause: Callable[[int], None] | None = None,
                again: Callable[[Exception], bool] = is_concurrent_update
                ) -> T:
    """``call(1)``, then ``call(2)``... while it raises an exception
    ``again`` accepts (a generation conflict), at most ``tries`` calls;
    the last call's exception is the caller's. ``pause(n)`` runs after a
    failed call ``n``, before the next (a random wait, for pushes that
    compete for one provider).

    ``call`` reads what it writes again on each call after the first (its
    argument says which call it is).
    """
    for attempt in range(1, max(tries, 1)):
        try:
            return call(attempt)
        except Exception as exc:
            if not again(exc):
                raise
        if pause is not None:
            pause(attempt)
    return call(max(tries, 1))
