#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: commits per second of transactions that record an event.

``--writers`` processes (8) each run, for ``--seconds`` (6), transactions
through ferrum's own database layer that do what a conductor's node write
does: update one node's row (of ``--nodes``, 100) and record one event.
The figure is the transactions committed per second, all writers
together: how far the recording of events lets writers run side by side.
(The event feed before issue 42 made every such transaction of the fleet
commit one after the other, on the counter row's lock.)

On one database::

    .venv/bin/python tools/bench/event_writes.py --database-url URL

Two trees in one sitting, on one throwaway PostgreSQL cluster (a ferrum
checkout's test launcher, ``tests/postgres.py``), alternating A B B A
with a fresh database per run, the cluster made durable as a
deployment's is (``fsync``, ``synchronous_commit`` and
``full_page_writes`` on; ``--no-durable`` keeps the test cluster's
settings; ``--flush-delay-us N`` makes each WAL flush wait N us first,
PostgreSQL's ``commit_delay``, as on a volume whose flush takes that long,
where group commit decides); each run imports ferrum from its tree
(``PYTHONPATH``), this script and its venv being the same for both::

    git worktree add --detach /tmp/old OLD_COMMIT
    .venv/bin/python tools/bench/event_writes.py --vs /tmp/old

Prints one JSON line: ``commits_per_s`` (and ``commits``, ``failed``) for
one run; for ``--vs``, each side's runs, medians and spread ((max - min) /
median), and ``ratio``, this tree's median over the other's.
"""

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
import uuid
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT = os.path.dirname(os.path.dirname(_HERE))


def _writer(url: str, nodes: list[int], start_at: float, end_at: float,
            seed: int, counts: Any) -> None:
    import random

    import sqlalchemy as sa

    from ferrum import conf as ferrum_conf
    from ferrum.db import api as db_api
    from ferrum.objects import event as event_obj
    from ferrum.objects import node as node_obj

    db = db_api.Database(ferrum_conf.new_conf(), url=url, create=False)
    rng = random.Random(seed)
    committed = failed = 0
    while time.time() < start_at:
        time.sleep(0.001)  # all writers start together
    while time.time() < end_at:
        node_id = rng.choice(nodes)
        try:
            with db.writer() as conn:
                conn.execute(sa.update(node_obj.TABLE).where(
                    node_obj.TABLE.c.id == node_id).values(
                        extra={'n': committed}))
                event_obj.add(db, [event_obj.entry(
                    'bench', 'write %d' % committed, node_id=node_id)])
            committed += 1
        except Exception:  # counted: a benchmark reports, never hides
            failed += 1
    counts[seed] = (committed, failed)
    db.dispose()


def run_once(url: str, writers: int, seconds: float, node_count: int
             ) -> dict[str, Any]:
    from ferrum import conf as ferrum_conf
    from ferrum.db import api as db_api
    from ferrum.db import migration
    from ferrum.objects import node as node_obj

    db = db_api.Database(ferrum_conf.new_conf(), url=url)
    migration.upgrade(db.engine)
    nodes = [node_obj.Node.create(db, {
        'driver': 'fake-hardware', 'name': 'bench-%d' % index}).id
        for index in range(node_count)]
    db.dispose()
    counts = multiprocessing.Manager().dict()
    start_at = time.time() + 2  # once every process has imported ferrum
    procs = [multiprocessing.Process(target=_writer, args=(
        url, nodes, start_at, start_at + seconds, seed, counts))
        for seed in range(writers)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    committed = sum(c for c, _ in counts.values())
    return {'bench': 'event_writes', 'writers': writers, 'seconds': seconds,
            'commits': committed,
            'failed': sum(f for _, f in counts.values()),
            'commits_per_s': round(committed / seconds, 1),
            'ferrum': os.path.dirname(os.path.dirname(
                sys.modules['ferrum'].__file__ or ''))}


def _side(path: str | None, url: str, args: argparse.Namespace
          ) -> dict[str, Any]:
    env = dict(os.environ)
    env['PYTHONPATH'] = path or _CHECKOUT
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), '--database-url', url,
         '--writers', str(args.writers), '--seconds', str(args.seconds),
         '--nodes', str(args.nodes)], env=env, check=True,
        capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def _summary(values: list[float]) -> dict[str, Any]:
    median = statistics.median(values)
    return {'runs': values, 'median': median,
            'spread': round((max(values) - min(values)) / median, 3)}


def _durable(server: Any, flush_delay_us: int) -> None:
    # The test cluster trades durability for speed; a deployment's commit
    # waits for its WAL flush, which is when a lock held to the commit
    # costs most. Reloadable settings, so no restart.
    conn = server.admin_connection()
    try:
        with conn.cursor() as cur:
            for setting in ('fsync', 'synchronous_commit',
                            'full_page_writes'):
                cur.execute('ALTER SYSTEM SET %s = on' % setting)
            # PostgreSQL's own knob: every flush waits this long first
            # (commit_siblings 0: whoever else is running), as on a
            # volume whose flush takes that long; commits that arrive
            # meanwhile join it, as they join a slow flush.
            cur.execute('ALTER SYSTEM SET commit_delay = %d'
                        % flush_delay_us)
            cur.execute('ALTER SYSTEM SET commit_siblings = 0')
            cur.execute('SELECT pg_reload_conf()')
    finally:
        conn.close()


def run_vs(old: str, args: argparse.Namespace) -> dict[str, Any]:
    sys.path.insert(0, _CHECKOUT)
    from tests import postgres

    bindir = postgres.find_bindir()
    if bindir is None:
        raise SystemExit('event_writes: no PostgreSQL server binaries; '
                         'install postgresql')
    server = postgres.PostgresServer.create(bindir, postgres._run_as())
    results: dict[str, list[float]] = {'old': [], 'new': []}
    try:
        server.start()
        if args.durable:
            _durable(server, args.flush_delay_us)
        for side in ('old', 'new', 'new', 'old') * args.rounds:
            name = 'bench_%s' % uuid.uuid4().hex[:12]
            server.create_database(name)
            try:
                line = _side(old if side == 'old' else None,
                             server.url(name), args)
            finally:
                server.drop_database(name)
            print(side, line, file=sys.stderr)
            results[side].append(line['commits_per_s'])
    finally:
        server.stop()
        server.remove()
    old_s, new_s = _summary(results['old']), _summary(results['new'])
    return {'bench': 'event_writes', 'writers': args.writers,
            'seconds': args.seconds, 'durable': args.durable,
            'flush_delay_us': args.flush_delay_us if args.durable else None,
            'old': old,
            'old_commits_per_s': old_s,
            'new_commits_per_s': new_s,
            'ratio': round(new_s['median'] / old_s['median'], 3),
            'load': os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--database-url')
    parser.add_argument('--vs', metavar='OLD_TREE',
                        help='a checkout of the other tree (see above)')
    parser.add_argument('--writers', type=int, default=8)
    parser.add_argument('--seconds', type=float, default=6.0)
    parser.add_argument('--nodes', type=int, default=100)
    parser.add_argument('--rounds', type=int, default=1)
    parser.add_argument('--flush-delay-us', type=int, default=0,
                        help='with --vs: microseconds each WAL flush waits '
                             '(commit_delay), a slower volume\'s flush')
    parser.add_argument('--no-durable', dest='durable', action='store_false',
                        help='with --vs, keep the test cluster\'s fsync=off '
                             'and synchronous_commit=off')
    args = parser.parse_args()
    if args.vs:
        print(json.dumps(run_vs(os.path.abspath(args.vs), args)))
    elif args.database_url:
        print(json.dumps(run_once(args.database_url, args.writers,
                                  args.seconds, args.nodes)))
    else:
        parser.error('give --database-url or --vs')


if __name__ == '__main__':
    main()
