#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: one page of each resource list at 10,000 rows (issue 41).

Fills one database with ``--rows`` rows of each resource in
:data:`RESOURCES` (bulk INSERTs, not the API: the point is the list, not
creation), then serves the API with cheroot on loopback, as
``ferrum-api`` does, and GETs the first page of each list (the default
limit, ``[api] max_limit``: 1000 rows) ``--requests`` times over HTTP::

    .venv/bin/python tools/bench/resource_lists.py
    .venv/bin/python tools/bench/resource_lists.py --throwaway-postgres
    .venv/bin/python tools/bench/resource_lists.py --url http://127.0.0.1:6385
    # (a running API, already filled: latency only)

Another resource is one more :data:`RESOURCES` entry: its list path, the
microversion that serves it, and how to fill its table. Prints one JSON
line: per list, the rows on the page and p50/p95/max latency in
milliseconds. Target: p95 <= 100 ms per list.
"""

import argparse
import contextlib
import dataclasses
import datetime
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import requests
import sqlalchemy as sa

from ferrum import conf as ferrum_conf
from ferrum.api import app as api_app
from ferrum.api import server
from ferrum.cmd import service_runner
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.db import models

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deployment  # noqa: E402  (--throwaway-postgres is shared)

#: Volume rows and port groups hang off nodes: this many a node (a volume
#: target per boot index).
PER_NODE = 10
_BATCH = 1000


@dataclasses.dataclass(frozen=True)
class Resource:
    #: The list, as a client GETs it.
    path: str
    #: The microversion asked for.
    version: str
    #: (connection, how many, node ids) -> the rows inserted.
    fill: Callable[[sa.Connection, int, list[int]], None]


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def _insert(conn: sa.Connection, model: type[models.Base],
            rows: Iterator[dict[str, Any]]) -> None:
    table = models.table(model)
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == _BATCH:
            conn.execute(sa.insert(table), batch)
            batch = []
    if batch:
        conn.execute(sa.insert(table), batch)


def _chassis(conn: sa.Connection, count: int, _nodes: list[int]) -> None:
    _insert(conn, models.Chassis, (
        {'uuid': str(uuid.uuid4()), 'description': 'rack %d' % i,
         'extra': {'row': i % 40}, 'created_at': _now()}
        for i in range(count)))


def _connectors(conn: sa.Connection, count: int, nodes: list[int]) -> None:
    _insert(conn, models.VolumeConnector, (
        {'uuid': str(uuid.uuid4()), 'node_id': nodes[i // PER_NODE],
         'type': 'iqn', 'connector_id': 'iqn.2026-12.org.ferrum:%08d' % i,
         'extra': {}, 'created_at': _now()} for i in range(count)))


def _targets(conn: sa.Connection, count: int, nodes: list[int]) -> None:
    _insert(conn, models.VolumeTarget, (
        {'uuid': str(uuid.uuid4()), 'node_id': nodes[i // PER_NODE],
         'volume_type': 'iscsi', 'boot_index': i % PER_NODE,
         'volume_id': str(uuid.uuid4()),
         'properties': {'target_iqn': 'iqn.t:%d' % i, 'auth_password': 'x'},
         'extra': {}, 'created_at': _now()} for i in range(count)))


def _deploy_templates(conn: sa.Connection, count: int,
                      _nodes: list[int]) -> None:
    steps = [{'interface': 'bios', 'step': 'apply_configuration',
              'args': {'settings': [{'name': 'LogicalProc',
                                     'value': 'Enabled'}]},
              'priority': 150}]
    _insert(conn, models.DeployTemplate, (
        {'uuid': str(uuid.uuid4()), 'name': 'CUSTOM_BENCH_%05d' % i,
         'steps': steps, 'extra': {}, 'created_at': _now()}
        for i in range(count)))


def _portgroups(conn: sa.Connection, count: int, nodes: list[int]) -> None:
    _insert(conn, models.Portgroup, (
        {'uuid': str(uuid.uuid4()), 'name': 'bond-%05d' % i,
         'node_id': nodes[i // PER_NODE],
         'address': '52:54:%02x:%02x:%02x:%02x' % (
             0xa0, i >> 16 & 0xff, i >> 8 & 0xff, i & 0xff),
         'standalone_ports_supported': True, 'mode': 'active-backup',
         'properties': {}, 'extra': {}, 'internal_info': {},
         'created_at': _now()} for i in range(count)))


#: name -> what is listed and how its table is filled.
RESOURCES: dict[str, Resource] = {
    'chassis': Resource('/v1/chassis', '1.78', _chassis),
    'volume_connectors': Resource('/v1/volume/connectors', '1.78',
                                  _connectors),
    'volume_targets': Resource('/v1/volume/targets', '1.78', _targets),
    'deploy_templates': Resource('/v1/deploy_templates', '1.78',
                                 _deploy_templates),
    'portgroups': Resource('/v1/portgroups', '1.78', _portgroups),
}


def populate(db: db_api.Database, rows: int) -> None:
    """``rows`` of each resource, and the nodes the volume rows need."""
    with db.writer() as conn:
        _insert(conn, models.Node, (
            {'uuid': str(uuid.uuid4()), 'name': 'bench-%d' % i,
             'driver': 'fake-hardware', 'provision_state': 'manageable',
             'power_state': 'power off', 'conductor_group': '',
             'maintenance': False, 'protected': False, 'retired': False,
             'created_at': _now()} for i in range(rows // PER_NODE + 1)))
        nodes = list(conn.execute(sa.select(
            models.table(models.Node).c.id).order_by('id')).scalars())
        for resource in RESOURCES.values():
            resource.fill(conn, rows, nodes)


def _ms(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return round(ordered[index] * 1000, 1)


def measure(url: str, requests_each: int) -> dict[str, Any]:
    session = requests.Session()
    result: dict[str, Any] = {}
    for name, resource in RESOURCES.items():
        headers = {'X-OpenStack-Ironic-API-Version': resource.version}
        timings: list[float] = []
        shown = 0
        for _ in range(requests_each):
            started = time.perf_counter()
            response = session.get(url + resource.path, headers=headers,
                                   timeout=60)
            timings.append(time.perf_counter() - started)
            response.raise_for_status()
            body = response.json()
            shown = len(next(v for v in body.values()
                             if isinstance(v, list)))
        result[name] = {'page_rows': shown,
                        'p50_ms': _ms(timings, 0.50),
                        'p95_ms': _ms(timings, 0.95),
                        'max_ms': _ms(timings, 1.0)}
    return result


@contextlib.contextmanager
def _database(args: argparse.Namespace, workdir: str) -> Iterator[str]:
    if args.throwaway_postgres:
        with deployment._throwaway_postgres() as url:
            yield url
    else:
        yield args.database_url or 'sqlite:///%s' % os.path.join(
            workdir, 'lists.sqlite')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument('--database-url',
                        help='an empty database (default: a temporary '
                             'SQLite file)')
    source.add_argument('--throwaway-postgres', action='store_true',
                        help='start a PostgreSQL cluster for this run')
    source.add_argument('--url', help='list from this running API instead '
                        '(already filled)')
    parser.add_argument('--rows', type=int, default=10000,
                        help='rows of each resource (default: %(default)s)')
    parser.add_argument('--requests', type=int, default=40,
                        help='GETs of each list (default: %(default)s)')
    args = parser.parse_args()
    if args.url:
        print(json.dumps({'benchmark': 'resource_lists', 'url': args.url,
                          'requests': args.requests,
                          **measure(args.url.rstrip('/'), args.requests)}))
        return 0
    with tempfile.TemporaryDirectory() as workdir, \
            _database(args, workdir) as url:
        conf = ferrum_conf.new_conf([])
        conf.set_override('state_path', workdir)
        conf.set_override('port', 0, 'api')
        db = db_api.Database(conf, url=url)
        migration.upgrade(db.engine)
        started = time.perf_counter()
        populate(db, args.rows)
        filled = time.perf_counter() - started
        api = server.APIServer(conf)
        api.start(api_app.create_app(conf, db, None))  # type: ignore[arg-type]
        service_runner.freeze_start_up()  # as ferrum-api does once started
        try:
            result = measure(api.url, args.requests)
        finally:
            api.stop()
            db.dispose()
    print(json.dumps({
        'benchmark': 'resource_lists', 'backend': url.split(':', 1)[0],
        'rows': args.rows, 'requests': args.requests,
        'populate_s': round(filled, 1), **result}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
