# SPDX-License-Identifier: Apache-2.0
"""Migration 0009 on leases booked before it: only a lease that started
(so its start created its class) shows ``reservation_class`` at once."""

import datetime
import uuid

import sqlalchemy as sa

from ferrum.db import migration

_STATUSES = ('pending', 'starting', 'active', 'ending', 'ended', 'error',
             'cancelled')


def test_only_started_leases_in_placement_have_their_class(
        empty_db):
    engine = empty_db.engine
    migration.upgrade(engine, '0008')
    leases = sa.table('leases', *(sa.column(name) for name in (
        'uuid', 'project', 'count', 'start_at', 'end_at', 'cleaning_margin',
        'status', 'created_at', 'placement_class')))
    now = datetime.datetime(2026, 11, 26, 12, 0)
    with engine.begin() as conn:
        for status in _STATUSES:
            for placed in (True, False):
                conn.execute(leases.insert().values(
                    uuid=str(uuid.uuid4()), project='%s-%s' % (status,
                                                               placed),
                    count=1, start_at=now, end_at=now, cleaning_margin=0,
                    status=status, created_at=now, placement_class=placed))
    migration.upgrade(engine)
    with engine.connect() as conn:
        created = {row.project for row in conn.execute(sa.text(
            'SELECT project FROM leases WHERE class_created'))}
    assert created == {'active-True', 'ending-True', 'ended-True'}
