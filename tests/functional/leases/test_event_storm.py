# SPDX-License-Identifier: Apache-2.0
"""The event feed under writers it does not control: 8 writer threads in 3
processes, and, on PostgreSQL, a writer that hangs between its ids and its
commit (see ``ferrum.objects.event``, "Bounded waits")."""

import contextlib
import subprocess
import sys
import threading
import time

import pytest
import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.objects import event as event_obj
from tests import process
from tests.functional.leases.feed import follow
from tests.polling import wait_for

#: Writer threads per process: 8 in all.
THREADS = (3, 3, 2)
#: Write transactions per thread.
COUNT = 40


def _ids(db):
    with db.engine.connect() as conn:
        return conn.execute(sa.select(event_obj.TABLE.c.id).order_by(
            event_obj.TABLE.c.id)).scalars().all()


def test_a_follower_misses_and_repeats_nothing_from_3_writer_processes(site):
    """Each transaction spends up to 3 ms between its ids and its commit
    and one in ten rolls back; the follower reads pages of 7 meanwhile,
    through the API."""
    site.nodes(6)
    seen = []
    with contextlib.ExitStack() as stack:
        writers = [stack.enter_context(process.running(
            [sys.executable, '-m', 'tests.functional.leases.event_writers',
             site.db.url, str(threads), str(COUNT), str(seed)],
            stdout=subprocess.PIPE, text=True))
            for seed, threads in enumerate(THREADS)]
        since = 0
        while True:
            done = all(w.poll() is not None for w in writers)  # before
            page = site.client.get('/v1/events?since=%d&limit=7' % since)
            assert page.status_code == 200, page.get_data(as_text=True)
            events = page.json['events']
            seen.extend(e['id'] for e in events)
            if events:
                since = events[-1]['id']
            elif done:
                break
            else:
                threading.Event().wait(0.005)  # ask again shortly
        outputs = [w.communicate()[0] for w in writers]
    assert [w.returncode for w in writers] == [0, 0, 0], outputs
    # Of 320 transactions, about a tenth rolled back.
    assert sum(int(out) for out in outputs) > 240
    recorded = _ids(site.db)
    assert len(seen) == len(set(seen)), 'an event was repeated'
    assert seen == sorted(seen)
    assert seen == recorded, 'the follower missed %s' % sorted(
        set(recorded) - set(seen))[:10]


def _hung_sessions(db):
    with db.engine.connect() as conn:
        return conn.execute(sa.text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = "
            "current_database() AND state = 'idle in transaction'")
        ).scalar_one()


@pytest.mark.parametrize('site', ['postgresql'], indirect=True)
def test_a_writer_hung_in_its_tail_holds_the_feed_up_to_its_timeout(
        site, conf):
    """A writer takes its ids and hangs before its commit. The others do
    not wait for it; the feed holds at its ids (showing what came after
    would skip them, were it to commit) until the server ends it,
    ``[database] event_writer_timeout`` later, then goes on. The hung
    writer's events are never shown."""
    timeout = 4
    conf.set_override('event_writer_timeout', timeout, 'database')
    hung_db = db_api.Database(conf, url=site.db.url)
    holding, release = threading.Event(), threading.Event()
    errors = []

    def hung_writer():
        try:
            with hung_db.writer():
                event_obj.add(hung_db, [event_obj.entry('test', 'hung')])
                hung_db.before_commit(lambda _conn: (
                    holding.set(), release.wait(60)))
        except Exception as exc:  # reported by the test, not lost
            errors.append(exc)

    hung = threading.Thread(target=hung_writer)
    hung.start()
    try:
        assert holding.wait(30)
        held_at = time.monotonic()
        after = threading.Thread(target=event_obj.add, args=(
            site.db, [event_obj.entry('test', 'after')]))
        after.start()
        after.join(30)
        assert not after.is_alive(), 'a writer waited for the hung one'
        assert follow(site.client) == []
        assert _hung_sessions(site.db) == 1, 'ended before it was checked'
        wait_for(lambda: follow(site.client), timeout + 30,
                 what='the feed past the hung writer')
        held_s = time.monotonic() - held_at
        assert [e['event'] for e in follow(site.client)] == ['after']
        # The writer's timeout, then one back-off of the reader (half a
        # second), with room for a loaded machine.
        assert timeout - 0.5 <= held_s <= timeout + 5
        assert _hung_sessions(site.db) == 0
    finally:
        release.set()
        hung.join(30)
        hung_db.dispose()
    assert len(errors) == 1, 'the hung writer committed'
    assert [e['event'] for e in follow(site.client)] == ['after']
