#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: drive fake nodes through the conductor's Python interface.

Enrolls ``--nodes`` fake-hardware nodes, takes them to ``available``
(manage, then provide with automated cleaning), then deploys and undeploys
them all, with no HTTP in the way. Prints one JSON line:

* ``nodes_per_s``: enroll to available, nodes per second;
* ``deploy_undeploy_per_s``: full deploy + undeploy cycles per second;
* ``rss_mb``: the process's peak resident memory.

``--idle-nodes N`` adds N more enrolled nodes first (to measure memory with a
large inventory), ``--url`` picks the database (SQLite in a temporary
directory by default), and ``--no-history`` turns node history off
(``[conductor] node_history = false``), to measure what recording it costs
with one build.
"""

import argparse
import json
import resource
import sys
import tempfile
import time

import sqlalchemy as sa

from ferrum import conf as ferrum_conf
from ferrum.common import states
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.objects import node as node_obj


def _count(db: db_api.Database, ids: list[int], state: str) -> int:
    table = node_obj.TABLE
    with db.reader() as conn:
        return int(conn.execute(sa.select(sa.func.count()).where(
            table.c.id.in_(ids), table.c.provision_state == state,
            table.c.reservation.is_(None))).scalar_one())


def _run_all(manager, db, ids, action, state, timeout=600.0) -> None:
    """Start ``action`` on every node (retrying a full pool), wait for all."""
    from ferrum.common import exception
    pending = list(ids)
    deadline = time.monotonic() + timeout
    while pending:
        retry = []
        for node_id in pending:
            try:
                manager.do_provisioning_action(node_id, action)
            except exception.NoFreeConductorWorker:
                retry.append(node_id)
        pending = retry
        if pending:
            time.sleep(0.01)
    while _count(db, ids, state) < len(ids):
        if time.monotonic() > deadline:
            raise SystemExit('timed out waiting for %s' % state)
        time.sleep(0.02)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--idle-nodes', type=int, default=0)
    parser.add_argument('--url', help='database URL (default: temp SQLite)')
    parser.add_argument('--no-history', action='store_true',
                        help='do not record node history')
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix='ferrum-bench-')
    conf = ferrum_conf.new_conf()
    conf.set_override('state_path', tmp)
    conf.set_override('host', 'bench-conductor')
    conf.set_override('node_history', not args.no_history,
                      group='conductor')
    db = db_api.Database(conf, url=args.url)
    migration.upgrade(db.engine)
    conductor = service.ConductorService(conf, db=db)
    conductor.start(start_periodics=False)
    manager = conductor.manager
    assert manager is not None

    for _ in range(args.idle_nodes):
        manager.create_node({'driver': 'fake-hardware'})

    start = time.monotonic()
    ids = [manager.create_node({'driver': 'fake-hardware'}).id
           for _ in range(args.nodes)]
    _run_all(manager, db, ids, 'manage', states.MANAGEABLE)
    _run_all(manager, db, ids, 'provide', states.AVAILABLE)
    enroll_s = time.monotonic() - start

    start = time.monotonic()
    _run_all(manager, db, ids, 'deploy', states.ACTIVE)
    _run_all(manager, db, ids, 'undeploy', states.AVAILABLE)
    cycle_s = time.monotonic() - start
    conductor.stop()

    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({
        'benchmark': 'conductor_flow', 'backend': db.engine.dialect.name,
        'nodes': args.nodes, 'idle_nodes': args.idle_nodes,
        'history': not args.no_history,
        'nodes_per_s': round(args.nodes / enroll_s, 1),
        'deploy_undeploy_per_s': round(args.nodes / cycle_s, 1),
        'enroll_to_available_s': round(enroll_s, 2),
        'deploy_undeploy_s': round(cycle_s, 2),
        'rss_mb': round(rss_mb, 1)}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
