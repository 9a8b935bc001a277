# SPDX-License-Identifier: Apache-2.0
"""The lease status table, pinned: change it only on purpose."""

import datetime

import pytest

from ferrum.common import lease_statuses as statuses
from ferrum.leases import windows

GOLDEN = {
    ('pending', 'start'): 'starting',
    ('pending', 'cancel'): 'cancelled',
    ('starting', 'done'): 'active',
    ('starting', 'fail'): 'error',
    ('active', 'end'): 'ending',
    ('error', 'end'): 'ending',
    ('ending', 'done'): 'ended',
}


def test_table_is_pinned():
    assert statuses.TRANSITIONS == GOLDEN


def test_shape():
    targets = set(GOLDEN.values())
    sources = {status for status, _ in GOLDEN}
    assert set(statuses.ALL) == targets | sources | {'pending'}
    # Final statuses have no way out; every other status has one.
    assert statuses.FINAL == frozenset(statuses.ALL) - sources
    # Every transitional status can finish, whatever happens.
    for status in statuses.TRANSITIONAL:
        assert any(s == status for s, _ in GOLDEN)
    # Every status but the final ones holds the nodes, error included.
    assert 'error' in statuses.HOLDING
    assert statuses.HOLDING.isdisjoint(statuses.FINAL)


def test_refused_transition():
    with pytest.raises(statuses.TransitionNotAllowed):
        statuses.next_status('ended', 'start')


def test_free_gaps():
    t = [datetime.datetime(2026, 1, 1, hour) for hour in range(10)]
    busy = [(t[2], t[3]), (t[1], t[2]), (t[5], t[7]), (t[6], t[9])]
    assert windows.free_gaps(busy, t[0], t[8]) == [(t[0], t[1]),
                                                   (t[3], t[5])]
    assert windows.free_gaps([], t[0], t[1]) == [(t[0], t[1])]
