# SPDX-License-Identifier: Apache-2.0
"""Conductor registration is one insert-or-update of its hostname's row,
on SQLite and PostgreSQL: a restart takes its row over, and registrations
racing for one hostname all succeed, leaving one row."""

import threading
from concurrent import futures

import pytest
import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.objects import conductor as conductor_obj
from tests.polling import wait_for

TIMEOUT = 60


@pytest.fixture(params=['sqlite', 'postgresql'])
def any_db(request, db):
    return db if request.param == 'sqlite' else request.getfixturevalue(
        'pg_db')


def _rows(db):
    with db.reader() as conn:
        return conn.execute(sa.select(conductor_obj.TABLE)).mappings().all()


def test_a_restart_takes_its_row_over(any_db, caplog):
    first = conductor_obj.register(any_db, 'c1', 'g1', TIMEOUT,
                                   'http://127.0.0.1:1/')
    assert 'still registered' not in caplog.text
    conductor_obj.unregister(any_db, first.id)
    again = conductor_obj.register(any_db, 'c1', 'g2', TIMEOUT,
                                   'http://127.0.0.1:2/')
    # The same row (its id, and when it was first registered), online
    # again with the new values.
    assert (again.id, again.created_at) == (first.id, first.created_at)
    assert (again.conductor_group, again.rpc_address, again.online) == (
        'g2', 'http://127.0.0.1:2/', True)
    assert again.heartbeat_at >= first.heartbeat_at
    assert 'still registered' not in caplog.text
    # Back while its old registration still looks alive: a warning.
    conductor_obj.register(any_db, 'c1', 'g2', TIMEOUT)
    assert 'c1 was still registered as alive' in caplog.text
    assert len(_rows(any_db)) == 1


def test_racing_registrations_of_one_hostname_all_succeed(any_db, conf):
    """A read-then-insert would let two see no row and the second insert
    fail on the unique hostname; one statement cannot. Each racer has its
    own engine, as conductors in their own processes have."""
    racers = 8
    start = threading.Barrier(racers)
    engines = [db_api.Database(conf, url=any_db.url) for _ in range(racers)]

    def register(index):
        start.wait()
        return conductor_obj.register(
            engines[index], 'racer', 'g', TIMEOUT,
            'http://127.0.0.1:%d/' % (1000 + index))
    try:
        with futures.ThreadPoolExecutor(racers) as pool:
            # .result() raises a racer's error, if any.
            results = [call.result(timeout=60) for call in [
                pool.submit(register, index) for index in range(racers)]]
    finally:
        for engine in engines:
            engine.dispose()
    rows = _rows(any_db)
    assert len(rows) == 1
    assert len({result.id for result in results}) == 1
    assert rows[0]['rpc_address'] in {
        'http://127.0.0.1:%d/' % (1000 + index) for index in range(racers)}


def _waiting_on_a_lock(db):
    with db.reader() as conn:
        return conn.execute(sa.text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = "
            "current_database() AND wait_event_type = 'Lock'")).scalar()


def test_a_registration_behind_an_uncommitted_one_updates_its_row(
        pg_db, conf):
    """The race made certain on PostgreSQL: the second registration runs
    while the first one's insert is not committed yet (a read would see
    no row), waits on the hostname's unique index, and then updates the
    row instead of failing."""
    other = db_api.Database(conf, url=pg_db.url)
    errors = []

    def second():
        try:
            conductor_obj.register(other, 'c1', 'g', TIMEOUT,
                                   'http://127.0.0.1:2/')
        except Exception as exc:  # reported below, with its type
            errors.append(exc)
    thread = threading.Thread(target=second)
    try:
        with pg_db.writer():
            conductor_obj.register(pg_db, 'c1', 'g', TIMEOUT,
                                   'http://127.0.0.1:1/')
            thread.start()
            wait_for(lambda: _waiting_on_a_lock(other), timeout=30,
                     what='the second registration to wait on the first')
        thread.join(timeout=30)
    finally:
        other.dispose()
    assert not errors, [repr(exc) for exc in errors]
    [row] = _rows(pg_db)
    assert row['rpc_address'] == 'http://127.0.0.1:2/'
