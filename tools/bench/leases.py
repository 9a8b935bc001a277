#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: lease creation under concurrency, and the engine at scale.

In one process, on ``--database-url`` (default: SQLite in a temporary
directory) or ``--throwaway-postgres``:

1. enrolls ``--nodes`` available fake-hardware nodes (bulk insert) and
   books ``--future-leases`` leases of 1 to 5 nodes in the next 30 days
   (not timed);
2. for each lease size (1, 10, 100 nodes), ``--concurrency`` threads send
   ``--requests`` ``POST /v1/leases`` in all through the real WSGI
   application (Flask's client, no sockets), each for a random window in
   the next 30 days: ``create_<size>`` gives p50/p95 latency of the
   answers 201, and how many were 201 and 409;
3. counts overlapping windows with an independent SQL query over every
   pair of holding rows of one node (``overlaps``, must be 0);
4. books ``--due`` one-node leases that all start at the same second and
   end ``--due-length`` seconds later, at the same second; starts the
   conductor's periodic tasks (the lease engine every ``[lease]
   check_interval``, default settings) and measures ``due_active_s``, the
   time from that start until all are active. Then the lessee of
   ``--deployed`` of them "deploys" its node (provision state ``active``,
   an instance, ``instance_info`` and ``extra`` set in SQL), so that the
   end must undeploy it and clean it on fake hardware. From the common
   end second it measures ``due_back_s``, until every lease is ended with
   its node back, and ``back_after_clean_max_s``: the longest a node
   waited between the end of its cleaning (its last provision change;
   for a node that needed none, the end of its lease) and being back
   (lessee cleared, the node's ``updated_at``); ``not_back`` counts
   nodes still leased, held, with an instance or with the lessee's
   ``extra`` (must be 0).

Prints one JSON line.

With ``--placement``, it measures instead the start and end of leases of
1, 10 and 100 nodes with the real Placement and without it, and the
Placement requests each costs (issue 22; see tools/bench/lease_placement.py).
"""

import argparse
import concurrent.futures
import contextlib
import datetime
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deployment  # noqa: E402  (--throwaway-postgres is shared)
import lease_placement  # noqa: E402

from ferrum import conf as ferrum_conf  # noqa: E402
from ferrum.api import app as api_app  # noqa: E402
from ferrum.conductor import service  # noqa: E402
from ferrum.db import api as db_api  # noqa: E402
from ferrum.db import migration  # noqa: E402
from ferrum.leases import engine  # noqa: E402
from ferrum.leases import selection  # noqa: E402
from ferrum.objects import base  # noqa: E402
from ferrum.objects import lease as lease_obj  # noqa: E402
from ferrum.objects import node as node_obj  # noqa: E402

_FAKE = {'%s_interface' % kind: 'fake' for kind in (
    'power', 'management', 'boot', 'deploy', 'inspect', 'vendor')}
OVERLAPS = sa.text(
    'SELECT COUNT(*) FROM lease_nodes a JOIN lease_nodes b '
    'ON a.node_id = b.node_id AND a.id < b.id WHERE a.holding AND b.holding '
    'AND a.start_at < b.block_end AND b.start_at < a.block_end')


def _enroll(db: db_api.Database, count: int) -> None:
    now = base.utcnow()
    rows = [dict(_FAKE, uuid=base.new_uuid(), driver='fake-hardware',
                 provision_state='available', power_state='power off',
                 resource_class='bench', maintenance=False, retired=False,
                 protected=False, conductor_group='', created_at=now,
                 network_interface='noop') for _ in range(count)]
    with db.writer() as conn:
        conn.execute(sa.insert(node_obj.TABLE), rows)


def _book(db: db_api.Database, count: int, start: datetime.datetime,
          end: datetime.datetime, margin: int) -> lease_obj.Lease:
    values = {'project': 'bench', 'resource_class': 'bench', 'count': count,
              'traits': [], 'start_at': start, 'end_at': end,
              'cleaning_margin': margin}

    def pick(conn: sa.Connection,
             lease: lease_obj.Lease) -> list[tuple[int, str]]:
        return selection.pick_all(
            conn, selection.Ask.of(lease, lease.start_at, False), count)
    return lease_obj.Lease.create(db, values, pick)


def _window(rng: random.Random) -> tuple[datetime.datetime,
                                         datetime.datetime]:
    start = base.utcnow().replace(microsecond=0) + datetime.timedelta(
        minutes=rng.randrange(24 * 60, 30 * 24 * 60))
    return start, start + datetime.timedelta(minutes=rng.randrange(60, 480))


def _iso(when: datetime.datetime) -> str:
    return when.isoformat() + 'Z'


def _create_phase(app: Any, size: int, requests: int,
                  concurrency: int) -> dict[str, Any]:
    def one(seed: int) -> tuple[int, float]:
        start, end = _window(random.Random(seed))
        client = app.test_client()
        began = time.perf_counter()
        response = client.post('/v1/leases', json={
            'project': 'bench', 'resource_class': 'bench', 'count': size,
            'start': _iso(start), 'end': _iso(end)})
        return response.status_code, time.perf_counter() - began

    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(one, range(size * 100000,
                                           size * 100000 + requests)))
    ok = sorted(latency for code, latency in results if code == 201)
    quantiles = (statistics.quantiles(ok, n=20) if len(ok) > 1
                 else ok * 19)
    return {'p50_ms': round(statistics.median(ok) * 1000, 1) if ok else None,
            'p95_ms': round(quantiles[18] * 1000, 1) if ok else None,
            'created': len(ok),
            'refused_409': sum(1 for code, _ in results if code == 409),
            'other': sorted({code for code, _ in results} - {201, 409})}


def _wait(db: db_api.Database, ids: list[int], status: str,
          timeout: float) -> float:
    table = lease_obj.TABLE
    while True:
        with db.reader() as conn:
            left = conn.execute(sa.select(sa.func.count()).where(
                table.c.id.in_(ids), table.c.status != status)).scalar()
        if not left:
            return time.time()
        if time.time() > timeout:
            raise SystemExit('%d leases never reached %s' % (left, status))
        time.sleep(0.05)


def _seconds(when: datetime.datetime) -> float:
    return (when - datetime.datetime(1970, 1, 1)).total_seconds()


def _until(when: datetime.datetime) -> None:
    while time.time() < _seconds(when):
        time.sleep(0.05)


def _deploy(db: db_api.Database, leases: list[lease_obj.Lease]) -> None:
    """What a lessee leaves on a node it deployed (set in SQL, as the
    enrollment is): the end must undeploy, clean and wipe it."""
    table = node_obj.TABLE
    with db.writer() as conn:
        for lease in leases:
            conn.execute(sa.update(table).where(
                table.c.uuid == lease.nodes[0]).values(
                    provision_state='active', instance_uuid=base.new_uuid(),
                    instance_info={'image_source': 'bench'},
                    extra={'lessee': 'was here'}))


def _after_end(db: db_api.Database, ids: list[int],
               end: datetime.datetime) -> tuple[float, int]:
    """(the longest wait of a node between the end of cleaning, or the end
    of its lease when it needed none, and being back; nodes not back or
    not wiped)."""
    nodes, rows = node_obj.TABLE, lease_obj.NODES
    with db.reader() as conn:
        found = conn.execute(sa.select(
            nodes.c.updated_at, nodes.c.provision_updated_at,
            nodes.c.lessee, nodes.c.instance_uuid, nodes.c.extra,
            rows.c.holding).where(
                nodes.c.id == rows.c.node_id,
                rows.c.lease_id.in_(ids))).all()
    longest = max((row.updated_at - max(end, row.provision_updated_at or end)
                   ).total_seconds() for row in found)
    wrong = sum(1 for row in found if row.lessee is not None or row.holding
                or row.instance_uuid is not None or row.extra)
    return longest, wrong


def _due_phase(conductor: service.ConductorService, db: db_api.Database,
               due: int, deployed: int, length: int) -> dict[str, Any]:
    now = base.utcnow().replace(microsecond=0)
    start = now + datetime.timedelta(seconds=5 + due // 200)
    end = start + datetime.timedelta(seconds=length)
    leases = [_book(db, 1, start, end, 0) for _ in range(due)]
    ids = [lease.id for lease in leases]
    conductor.start_periodics()
    _until(start)
    active = _wait(db, ids, 'active', _seconds(start) + 300) - _seconds(
        start)
    _deploy(db, leases[:deployed])
    _until(end)
    back = _wait(db, ids, 'ended', _seconds(end) + 300) - _seconds(end)
    longest, wrong = _after_end(db, ids, end)
    return {'due': due, 'due_active_s': round(active, 2),
            'due_deployed': deployed, 'due_back_s': round(back, 2),
            'back_after_clean_max_s': round(longest, 2),
            'not_back': wrong}


def run(url: str | None, args: argparse.Namespace) -> dict[str, Any]:
    conf = ferrum_conf.new_conf()
    conf.set_override('state_path', tempfile.mkdtemp(prefix='ferrum-bench-'))
    conf.set_override('host', 'bench-conductor')
    conf.set_override('sync_power_state_interval', 0, 'conductor')
    db = db_api.Database(conf, url=url)
    migration.upgrade(db.engine)
    _enroll(db, args.nodes)
    rng = random.Random(0)
    for _ in range(args.future_leases):
        _book(db, rng.randint(1, 5), *_window(rng),
              conf.lease.cleaning_margin)
    conductor = service.ConductorService(
        conf, db=db, extra_periodics=[engine.LeaseEngine()])
    conductor.start(start_periodics=False)
    assert conductor.manager is not None
    app = api_app.create_app(conf, db,
                             conductor.manager)
    result: dict[str, Any] = {
        'benchmark': 'leases', 'database': db.engine.dialect.name,
        'nodes': args.nodes, 'future_leases': args.future_leases,
        'concurrency': args.concurrency, 'requests': args.requests}
    try:
        for size in (1, 10, 100):
            result['create_%d' % size] = _create_phase(
                app, size, args.requests, args.concurrency)
        with db.engine.connect() as conn:
            result['overlaps'] = conn.execute(OVERLAPS).scalar()
        result.update(_due_phase(conductor, db, args.due, args.deployed,
                                 args.due_length))
    finally:
        conductor.stop()
        db.dispose()
    return result


@contextlib.contextmanager
def _database(args: argparse.Namespace) -> Iterator[str | None]:
    if args.throwaway_postgres:
        with deployment._throwaway_postgres() as url:
            yield url
    else:
        yield args.database_url


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument('--database-url',
                        help='database URL (default: a temporary SQLite)')
    source.add_argument('--throwaway-postgres', action='store_true',
                        help='start a PostgreSQL cluster for this run')
    parser.add_argument('--placement', action='store_true',
                        help='measure leases with and without Placement '
                             '(issue 22) instead')
    parser.add_argument('--nodes', type=int,
                        help='nodes enrolled (default 10000; with '
                             '--placement, the largest size + 10)')
    parser.add_argument('--future-leases', type=int, default=1000)
    parser.add_argument('--concurrency', type=int, default=8)
    parser.add_argument('--requests', type=int, default=200,
                        help='POSTs per lease size')
    parser.add_argument('--due', type=int, default=1000)
    parser.add_argument('--deployed', type=int, default=100,
                        help='due leases whose node the lessee deployed')
    parser.add_argument('--due-length', type=int, default=20,
                        help='seconds from the due leases\' start to their '
                             'common end')
    lease_placement.add_arguments(parser)
    args = parser.parse_args()
    if args.placement:
        args.nodes = args.nodes or lease_placement.nodes_needed(args)
        return lease_placement.main(args)
    args.nodes = args.nodes or 10000
    with _database(args) as url:
        result = run(url, args)
    print(json.dumps(result))
    return 0 if result['overlaps'] == 0 and not result['not_back'] else 1


if __name__ == '__main__':
    sys.exit(main())
