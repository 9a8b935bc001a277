# SPDX-License-Identifier: Apache-2.0
"""``GET /v1/events``, the event feed, on SQLite and PostgreSQL: a lease's
and an allocation's events in order, paging, and a follower that misses
and repeats nothing while leases are booked and started from 8 threads."""

import concurrent.futures
import datetime
import random
import threading

import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.allocation import allocator
from ferrum.leases import engine
from ferrum.objects import event as event_obj
from tests.functional.leases.feed import follow
from tests.functional.leases.sites import iso
from tests.polling import wait_for


def test_a_lease_and_its_nodes_in_the_feed_in_order(site):
    ctx = site.conductor.ctx
    nodes = site.nodes(2)
    lease = site.post(project='tenant', resource_class='gold', count=2,
                      end=site.later(7200)).json
    engine.run(ctx)
    site.clock.advance(3700)  # the default before_end: 1 h before the end
    engine.run(ctx)
    site.clock.advance(3600)

    def ended():
        engine.run(ctx)
        return site.client.get('/v1/leases/%s' % lease['uuid']
                               ).json['status'] == 'ended'
    wait_for(ended, what='the lease to end')
    allocation = allocator.create(ctx, {'resource_class': 'gold'}, [])
    events = follow(site.client)
    ids = [event['id'] for event in events]
    assert ids == sorted(set(ids))
    texts = [event['event'] for event in events]
    prefix = 'Lease %s ' % lease['uuid']
    assert [e['event'][len(prefix):] for e in events
            if e['lease_uuid'] == lease['uuid'] and not e['node_uuid']] == [
        'created', 'starting', 'started',
        'ending soon (ends at %s)' % lease['end'],
        'ending', 'ended']
    for node in nodes:
        mine = [e for e in events if e['node_uuid'] == node.uuid
                and e['event_type'] == 'lease']
        assert [e['event'] for e in mine] == [
            'Lease %s started: leased to project tenant' % lease['uuid'],
            'Lease %s ended: project tenant is no longer the lessee'
            % lease['uuid'],
            'Cleaning for the end of lease %s of project tenant'
            % lease['uuid'],
            'Given back by lease %s of project tenant' % lease['uuid']]
        assert {e['lessee'] for e in mine} == {'tenant'}
        assert texts.index(prefix + 'starting') < texts.index(
            mine[0]['event']) < texts.index(prefix + 'started')
        assert texts.index(prefix + 'ending') < texts.index(
            mine[1]['event']) < texts.index(prefix + 'ended')
    assert texts[-2:] == [
        'Allocation %s created' % allocation.uuid,
        'Allocation %s active on node %s' % (allocation.uuid,
                                             allocation.node_uuid)]
    assert events[-1]['state'] == 'active'
    assert events[-1]['allocation_uuid'] == allocation.uuid


def test_a_failed_allocation_is_an_error_event(site):
    allocation = allocator.create(site.conductor.ctx,
                                  {'resource_class': 'none-such'}, [])
    assert allocation.state == 'error'
    last = follow(site.client)[-1]
    assert last['severity'] == 'ERROR'
    assert last['event'].startswith('Allocation %s failed: '
                                    % allocation.uuid)
    assert last['allocation_uuid'] == allocation.uuid


def test_the_feed_answers_at_once_and_pages_without_repeats(site):
    site.nodes(5)
    for _ in range(5):
        site.post(project='p', resource_class='gold', count=1,
                  start=site.later(86400), end=site.later(90000))
    first = site.client.get('/v1/events?limit=2').json
    assert len(first['events']) == 2
    assert first['next'].endswith('/v1/events?since=%d&limit=2'
                                  % first['events'][-1]['id'])
    rest = follow(site.client, since=first['events'][-1]['id'], limit=2)
    assert [e['event'] for e in first['events'] + rest] == [
        e['event'] for e in follow(site.client, limit=100)]
    last = rest[-1]['id']
    empty = site.client.get('/v1/events?since=%d' % last).json
    assert empty['events'] == []
    assert 'since=%d' % last in empty['next']


@pytest.mark.parametrize('query, words', [
    ('since=-1', 'since must be the id of an event'),
    ('since=x', 'since must be the id of an event'),
    ('limit=ten', 'limit must be a whole number'),
    ('marker=1', 'Unknown query parameter(s) marker'),
])
def test_bad_feed_queries_are_clear_errors(site, query, words):
    response = site.client.get('/v1/events?' + query)
    assert response.status_code == 400
    assert words in response.get_data(as_text=True)


def _all_ids(db):
    with db.engine.connect() as conn:
        return conn.execute(sa.select(event_obj.TABLE.c.id).order_by(
            event_obj.TABLE.c.id)).scalars().all()


def test_a_follower_misses_and_repeats_nothing_during_a_lease_storm(site):
    """8 threads book leases (most start at once, so the engine, running
    meanwhile, starts them: node and lease events from two writers) while
    a follower asks for what is new, page after page."""
    site.nodes(24)
    stop, written = threading.Event(), threading.Event()
    seen = []
    errors = []
    codes = []

    def follower():
        client = site.client.application.test_client()
        since = 0
        try:
            while True:
                done = written.is_set()  # read before the last pages
                page = client.get('/v1/events?since=%d&limit=7' % since).json
                seen.extend(e['id'] for e in page['events'])
                if page['events']:
                    since = page['events'][-1]['id']
                elif done:
                    return
                else:
                    # Nothing new yet: ask again shortly, as a follower
                    # does (spinning, it kept SQLite's writers waiting
                    # and the storm took over a minute).
                    written.wait(0.01)
        except Exception as exc:  # reported by the test, not lost
            errors.append(exc)

    def book(seed):
        rng = random.Random(seed)
        client = site.client.application.test_client()
        for _ in range(8):
            start = site.clock() + datetime.timedelta(
                minutes=rng.choice((0, 0, 30, 600)))
            codes.append(client.post('/v1/leases', json={
                'project': 'p%d' % seed, 'resource_class': 'gold',
                'count': rng.randint(1, 3), 'start': iso(start),
                'end': iso(start + datetime.timedelta(hours=2))}
            ).status_code)

    def run_engine():
        while not stop.is_set():
            engine.run(site.conductor.ctx)

    watcher = threading.Thread(target=follower)
    starter = threading.Thread(target=run_engine)
    watcher.start()
    starter.start()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(book, range(8)))
    stop.set()
    starter.join(60)
    written.set()  # nothing writes events any more
    watcher.join(60)
    assert not errors
    assert len(seen) == len(set(seen)), 'an event was repeated'
    assert seen == sorted(seen)
    recorded = _all_ids(site.db)
    assert set(codes) <= {201, 409}
    # A created event per lease booked, and the starts' events.
    assert len(recorded) > codes.count(201) > 10
    assert seen == recorded, 'the follower missed %s' % sorted(
        set(recorded) - set(seen))[:10]


def test_an_id_is_never_visible_before_a_lower_one(site):
    """Transaction A takes an event id and has not committed; B records
    an event meanwhile. On SQLite B waits for A (the one writer). On
    PostgreSQL B does not wait: it commits its higher id first, which a
    plain read shows (what a follower of a bare sequence would take, and
    then never see A's); the feed holds at A's open tail, and gives both,
    in order, once A commits."""
    db = site.db
    a_holds, a_may_commit = threading.Event(), threading.Event()

    def transaction_a():
        with db.writer():
            event_obj.add(db, [event_obj.entry('test', 'A')])
            db.before_commit(lambda _conn: (
                a_holds.set(), a_may_commit.wait(30)))

    def transaction_b():
        a_holds.wait(30)
        event_obj.add(db, [event_obj.entry('test', 'B')])

    threads = [threading.Thread(target=transaction_a),
               threading.Thread(target=transaction_b)]
    for thread in threads:
        thread.start()
    assert a_holds.wait(30)
    if site.backend == 'sqlite':
        # B's chance to commit first, were it not made to wait.
        threads[1].join(0.5)
        assert threads[1].is_alive()
        assert event_obj.since(db, 0, 10) == []
    else:
        threads[1].join(30)
        assert not threads[1].is_alive(), 'B waited for A'
        assert [row['event'] for row in event_obj.since(db, 0, 10)] == ['B']
        assert follow(site.client) == []
    a_may_commit.set()
    for thread in threads:
        thread.join(30)
    # (After a wait that timed out, the feed serves what it knew for a
    # moment: poll.)
    wait_for(lambda: len(follow(site.client)) == 2, 10,
             what='the feed past A and B')
    assert [e['event'] for e in follow(site.client)] == ['A', 'B']


def test_the_events_of_a_rolled_back_transaction_are_never_written(site):
    db = site.db
    with pytest.raises(RuntimeError), db.writer():
        event_obj.add(db, [event_obj.entry('test', 'lost')])
        raise RuntimeError('rolled back')
    event_obj.add(db, [event_obj.entry('test', 'kept')])
    assert [row['event'] for row in event_obj.since(db, 0, 10)] == ['kept']


@pytest.mark.parametrize('count', [1, 2])
def test_an_event_the_database_refuses_is_a_translated_error(site, count):
    """One row takes a faster path on each backend than several; either
    way a refused row (here a node that does not exist) raises the error
    oslo.db translates, as any other statement does, and the
    transaction's rows are not written."""
    db = site.db
    rows = [event_obj.entry('test', 'fine') for _ in range(count - 1)]
    rows.append(event_obj.entry('test', 'refused', node_id=10 ** 9))
    with pytest.raises(db_exc.DBReferenceError):
        event_obj.add(db, rows)
    assert event_obj.since(db, 0, 10) == []
    event_obj.add(db, [event_obj.entry('test', 'after')])
    assert [row['event'] for row in event_obj.since(db, 0, 10)] == ['after']


def test_a_deleted_allocation_ends_in_the_feed(site):
    """Each way an allocation goes: deleted with its node freed, deleted
    holding no node, and dropped with its node's instance_uuid."""
    ctx = site.conductor.ctx
    site.nodes(2)
    latest = {'X-OpenStack-Ironic-API-Version': 'latest'}
    with_node = allocator.create(ctx, {'resource_class': 'gold'}, [])
    failed = allocator.create(ctx, {'resource_class': 'none-such'}, [])
    dropped = allocator.create(ctx, {'resource_class': 'gold'}, [])
    assert (with_node.state, failed.state, dropped.state) == (
        'active', 'error', 'active')
    for allocation in (with_node, failed):
        response = site.client.delete(
            '/v1/allocations/%s' % allocation.uuid, headers=latest)
        assert response.status_code == 204, response.get_data(as_text=True)
    response = site.client.patch(
        '/v1/nodes/%s' % dropped.node_uuid, headers=latest,
        json=[{'op': 'remove', 'path': '/instance_uuid'}])
    assert response.status_code == 200, response.get_data(as_text=True)
    ends = [e for e in follow(site.client) if e['event'].endswith('deleted')]
    assert [(e['allocation_uuid'], e['state'], e['node_uuid'])
            for e in ends] == [(with_node.uuid, 'active', with_node.node_uuid),
                               (failed.uuid, 'error', None),
                               (dropped.uuid, 'active', dropped.node_uuid)]
    assert [e['event'] for e in ends] == [
        'Allocation %s deleted' % allocation.uuid
        for allocation in (with_node, failed, dropped)]


def test_the_cleanup_keeps_what_it_must_and_stops_at_its_batch(site):
    """Beyond max_entries a node's entries go, oldest first, unless younger
    than minimum_days; events of no node go after retention_days, but the
    newest event stays; one run deletes at most a batch."""
    db = site.db
    now = datetime.datetime(2026, 11, 29, 12, 0)

    def day(days_ago):
        return now - datetime.timedelta(days=days_ago)
    nodes = site.nodes(2)
    for node in nodes:
        event_obj.add(db, [event_obj.entry(
            'test', '%s %d' % (node.uuid, age), node_id=node.id,
            created_at=day(age)) for age in (9, 4, 3, 1, 0)])
    event_obj.add(db, [event_obj.entry('test', 'old', created_at=day(30)),
                       event_obj.entry('test', 'recent', created_at=day(1)),
                       # Not older than retention_days: kept (a time
                       # stored unlike SQLAlchemy's compared older).
                       event_obj.entry('test', 'just kept',
                                       created_at=day(7)),
                       event_obj.entry('test', 'oldest last',
                                       created_at=day(40))])

    def prune(batch):
        return event_obj.prune(db, max_entries=2, minimum_days=5,
                               retention_days=7, batch=batch, now=now)
    assert prune(batch=2) == 2
    assert prune(batch=2) == 1
    assert prune(batch=2) == 0
    left = {row['event'] for row in event_obj.since(db, 0, 100)}
    # Of each node: the two newest, and those beyond them younger than
    # minimum_days; the 9 days old one went.
    assert left == {'%s %d' % (node.uuid, age) for node in nodes
                    for age in (4, 3, 1, 0)} | {'recent', 'just kept',
                                                'oldest last'}
