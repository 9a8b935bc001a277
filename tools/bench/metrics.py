#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: one ``GET /metrics`` scrape of the API at fleet scale (issue 31).

Fills a database with ``--nodes`` nodes (bulk INSERTs, not the API: the
point is the scrape, not enrolment) spread over provision and power
states, maintenance, resource classes, conductor groups and owner/lessee
pairs, plus allocations, leases, live conductors and Placement outbox
rows; then serves the API with cheroot on loopback, as ``ferrum-api``
does, and scrapes ``/metrics`` ``--scrapes`` times over HTTP with the
fleet cache off (``[metrics] fleet_cache_seconds = 0``: every scrape
reads the database, the worst case). A SQLAlchemy event listener counts
the statements each scrape runs (SQLite's explicit ``BEGIN`` is not
one)::

    .venv/bin/python tools/bench/metrics.py --nodes 100000
    .venv/bin/python tools/bench/metrics.py --nodes 100000 --throwaway-postgres
    .venv/bin/python tools/bench/metrics.py --url http://127.0.0.1:6385
    # (a running API: latency only, its statements are not counted)

Prints one JSON line: scrape latency p50/p95/max in seconds, statements
per scrape, the response size and how many samples it held. Targets:
p95 <= 0.5 s and <= 5 statements.
"""

import argparse
import contextlib
import datetime
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from typing import Any

import requests
import sqlalchemy as sa
from prometheus_client import parser as prom_parser

from ferrum import conf as ferrum_conf
from ferrum.api import app as api_app
from ferrum.api import server
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.db import models
from ferrum.objects import conductor as conductor_obj

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deployment  # noqa: E402  (--throwaway-postgres is shared)

PROVISION = ['available'] * 6 + ['active'] * 8 + [
    'manageable', 'enroll', 'clean failed', 'deploy failed', 'cleaning',
    'deploying']
POWER = ['power off', 'power on']
CLASSES = ['gold', 'silver', 'bronze', 'gpu']
GROUPS = ['', 'rack1', 'rack2', 'rack3']
PROJECTS = [None] + ['%032x' % n for n in range(1, 21)]
CHUNK = 5000


def _nodes(count: int, now: datetime.datetime) -> Iterator[dict[str, Any]]:
    for n in range(count):
        yield {'uuid': str(uuid.UUID(int=n + 1)), 'name': 'node-%d' % n,
               'driver': 'fake-hardware', 'created_at': now,
               'provision_state': PROVISION[n % len(PROVISION)],
               'power_state': POWER[n % 2],
               'maintenance': n % 97 == 0, 'protected': False,
               'retired': False,
               'resource_class': CLASSES[n % len(CLASSES)],
               'conductor_group': GROUPS[n % len(GROUPS)],
               'owner': PROJECTS[n % len(PROJECTS)],
               'lessee': PROJECTS[(n // 7) % len(PROJECTS)],
               'driver_info': {'ipmi_password': 'not-in-metrics'}}


def populate(db: db_api.Database, nodes: int) -> None:
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    tables = {name: model.__table__ for name, model in (
        ('nodes', models.Node), ('allocations', models.Allocation),
        ('leases', models.Lease), ('outbox', models.PlacementOutbox))}
    rows = list(_nodes(nodes, now))
    with db.writer() as conn:
        for start in range(0, len(rows), CHUNK):
            conn.execute(sa.insert(tables['nodes']), rows[start:start + CHUNK])
        allocations = [{'uuid': str(uuid.uuid4()), 'created_at': now,
                        'state': ('active', 'error', 'allocating')[n % 3],
                        'resource_class': 'gold', 'candidate_nodes': [],
                        'extra': {}} for n in range(nodes // 10)]
        for start in range(0, len(allocations), CHUNK):
            conn.execute(sa.insert(tables['allocations']),
                         allocations[start:start + CHUNK])
        conn.execute(sa.insert(tables['leases']), [
            {'uuid': str(uuid.uuid4()), 'project': PROJECTS[1 + n % 20],
             'status': ('pending', 'active', 'ended', 'cancelled')[n % 4],
             'start_at': now, 'end_at': now + datetime.timedelta(hours=1),
             'resource_class': 'gold', 'count': 1, 'created_at': now,
             'cleaning_margin': 0,
             'extra': {}} for n in range(nodes // 100)])
        conn.execute(sa.insert(tables['outbox']), [
            {'node_uuid': str(uuid.UUID(int=n + 1)),
             'created_at': now - datetime.timedelta(seconds=n)}
            for n in range(min(nodes, 500))])
    for n in range(4):
        conductor_obj.register(db, 'conductor-%d' % n, GROUPS[n], 60)
    if db.engine.dialect.name == 'postgresql':
        # What autovacuum does within a minute of a bulk load: without
        # statistics the planner sorts for the GROUP BY (0.21 s at 100,000
        # nodes) instead of hashing (0.05 s).
        with db.writer() as conn:
            conn.exec_driver_sql('ANALYZE')


def scrape_all(url: str, scrapes: int, counted: list[str] | None
               ) -> dict[str, Any]:
    """Scrape ``url``; ``counted`` collects the statements of each
    scrape (None: not counted)."""
    latencies, statements = [], []
    body = ''
    with requests.Session() as session:
        for _ in range(scrapes):
            if counted is not None:
                counted.clear()
            started = time.perf_counter()
            response = session.get(url + '/metrics', timeout=60)
            latencies.append(time.perf_counter() - started)
            response.raise_for_status()
            if counted is not None:
                statements.append(len(counted))
            body = response.text
    samples = sum(len(family.samples) for family in
                  prom_parser.text_string_to_metric_families(body))
    latencies.sort()
    return {'p50_s': round(statistics.median(latencies), 4),
            'p95_s': round(latencies[int(0.95 * (len(latencies) - 1))], 4),
            'max_s': round(latencies[-1], 4),
            'statements_per_scrape': max(statements, default=None),
            'bytes': len(body), 'samples': samples,
            'secret_in_output': 'not-in-metrics' in body}


@contextlib.contextmanager
def _database(args: argparse.Namespace, workdir: str) -> Iterator[str]:
    if args.throwaway_postgres:
        with deployment._throwaway_postgres() as url:
            yield url
    else:
        yield args.database_url or 'sqlite:///%s' % os.path.join(
            workdir, 'metrics.sqlite')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument('--database-url',
                        help='an empty database (default: a temporary '
                             'SQLite file)')
    source.add_argument('--throwaway-postgres', action='store_true',
                        help='start a PostgreSQL cluster for this run')
    source.add_argument('--url', help='scrape this running API instead '
                        '(latency only: its statements are not counted)')
    parser.add_argument('--nodes', type=int, default=100000)
    parser.add_argument('--scrapes', type=int, default=40)
    args = parser.parse_args()
    if args.url:
        print(json.dumps({'benchmark': 'metrics', 'url': args.url,
                          'scrapes': args.scrapes,
                          **scrape_all(args.url, args.scrapes, None)}))
        return 0
    with tempfile.TemporaryDirectory() as workdir, \
            _database(args, workdir) as url:
        conf = ferrum_conf.new_conf([])
        conf.set_override('state_path', workdir)
        conf.set_override('port', 0, 'api')
        conf.set_override('fleet_cache_seconds', 0, 'metrics')
        db = db_api.Database(conf, url=url)
        migration.upgrade(db.engine)
        started = time.perf_counter()
        populate(db, args.nodes)
        filled = time.perf_counter() - started
        counted: list[str] = []

        def count(_conn: Any, _cursor: Any, statement: str,
                  *_args: Any) -> None:
            if statement != 'BEGIN':
                counted.append(statement)
        sa.event.listen(db.engine, 'before_cursor_execute', count)
        api = server.APIServer(conf)
        api.start(api_app.create_app(conf, db, None))  # type: ignore[arg-type]
        try:
            result = scrape_all(api.url, args.scrapes, counted)
        finally:
            api.stop()
            db.dispose()
    print(json.dumps({
        'benchmark': 'metrics', 'backend': url.split(':', 1)[0],
        'nodes': args.nodes, 'scrapes': args.scrapes,
        'populate_s': round(filled, 1), **result}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
