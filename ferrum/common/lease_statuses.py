# SPDX-License-Identifier: Apache-2.0
"""Lease statuses and the transitions between them, as data.

A lease is created ``pending``. The engine (:mod:`ferrum.leases.engine`)
moves it through the transitional ``starting`` to ``active`` (or
``error`` when its start fails), and at its end through ``ending`` to
``ended``; a pending lease can be ``cancelled``. ``starting`` and
``ending`` name the conductor doing the work (``conductor_affinity``), so
another conductor finishes them if that one dies.

Every status but ``ended`` and ``cancelled`` holds the lease's nodes,
``error`` included: a lease that failed to start still owns its window
until it ends or is deleted, so that nobody books what an operator may
still want to repair and use.

The table is pinned by ``tests/unit/leases/test_statuses.py``; change both
together.
"""

PENDING = 'pending'
STARTING = 'starting'
ACTIVE = 'active'
ENDING = 'ending'
ENDED = 'ended'
CANCELLED = 'cancelled'
ERROR = 'error'

#: (status, event) -> next status. The only transitions there are.
TRANSITIONS: dict[tuple[str, str], str] = {
    (PENDING, 'start'): STARTING,
    (PENDING, 'cancel'): CANCELLED,
    (STARTING, 'done'): ACTIVE,
    (STARTING, 'fail'): ERROR,
    (ACTIVE, 'end'): ENDING,
    (ERROR, 'end'): ENDING,
    (ENDING, 'done'): ENDED,
}

ALL = (PENDING, STARTING, ACTIVE, ENDING, ENDED, CANCELLED, ERROR)
FINAL = frozenset({ENDED, CANCELLED})
#: A conductor is working on these; conductor_affinity names it.
TRANSITIONAL = frozenset({STARTING, ENDING})
HOLDING = frozenset(ALL) - FINAL


class TransitionNotAllowed(ValueError):
    """``event`` is not allowed in ``status``."""


def next_status(status: str, event: str) -> str:
    """The status ``event`` leads to from ``status``.

    :raises TransitionNotAllowed: the table has no such transition.
    """
    try:
        return TRANSITIONS[(status, event)]
    except KeyError:
        raise TransitionNotAllowed(
            'A lease in status "%s" cannot %s' % (status, event)) from None


def sources(event: str) -> frozenset[str]:
    """The statuses ``event`` is allowed in."""
    return frozenset(s for (s, e) in TRANSITIONS if e == event)
