# SPDX-License-Identifier: Apache-2.0
"""The lease engine on 2 real ``ferrum-conductor`` processes (PostgreSQL):
the one that claimed a start is SIGKILLed in the middle of it, and the
other finishes the start, once, after the dead one's heartbeat expires.

The start is held in the middle deterministically: the test locks the
lease's node rows, so the claiming conductor's first node update waits on
the lock, with the lease "starting" under its name (NO KEY UPDATE: the
foreign keys of the lease's own rows must not wait on it).
"""

import contextlib
import datetime
import signal

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.leases import selection
from ferrum.objects import base
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from tests.functional.leases.sites import FAKE
from tests.functional.rpc import cluster
from tests.polling import wait_for

HOSTS = ('lease-a', 'lease-b')
HEARTBEAT_TIMEOUT = 3
EXTRA = {'conductor': {'heartbeat_timeout': str(HEARTBEAT_TIMEOUT),
                       'sync_power_state_interval': '0'},
         'lease': {'check_interval': '1', 'busy_node_policy': 'fail',
                   'guard_time': '0', 'cleaning_margin': '0'}}


def _book(db, count):
    now = base.utcnow().replace(microsecond=0)
    values = {'project': 'tenant', 'resource_class': 'gold', 'count': count,
              'traits': [], 'start_at': now,
              'end_at': now + datetime.timedelta(hours=1),
              'cleaning_margin': 0}

    def pick(conn, lease):
        return selection.pick_all(
            conn, selection.Ask.of(lease, lease.start_at, True), count)

    return lease_obj.Lease.create(db, values, pick)


def test_killed_mid_start_is_finished_by_the_other(tmp_path, conf, pg_url):
    cluster.upgrade(tmp_path, pg_url)
    db = db_api.Database(conf, url=pg_url)
    nodes = [node_obj.Node.create(db, dict(FAKE)) for _ in range(3)]
    ids = [node.id for node in nodes]
    try:
        with contextlib.ExitStack() as stack:
            procs = {host: stack.enter_context(cluster.conductor(
                tmp_path, pg_url, host, EXTRA)) for host in HOSTS}
            cluster.wait_registered(db, procs, HEARTBEAT_TIMEOUT)
            blocker = db.engine.connect()
            holding = blocker.begin()
            blocker.execute(sa.text(
                'SELECT id FROM nodes WHERE id IN (%s) FOR NO KEY UPDATE'
                % ','.join(map(str, ids))))
            lease = _book(db, 3)

            def claimed():
                seen = lease_obj.Lease.get(db, lease.id)
                return seen if seen.status == 'starting' else None
            seen = wait_for(claimed, 30, what='the lease start claimed')
            owner = {c.id: c.hostname for c in conductor_obj.list_all(db)}[
                seen.conductor_affinity]
            victim, out = procs[owner]
            victim.send_signal(signal.SIGKILL)
            victim.wait(timeout=30)
            holding.rollback()
            blocker.close()

            def started():
                seen = lease_obj.Lease.get(db, lease.id)
                return seen if seen.status == 'active' else None
            seen = wait_for(started, 60, what='the lease active')
            (survivor,) = set(HOSTS) - {owner}
            log = cluster.output(procs[survivor][1])
            assert 'took over "starting" from dead conductor' in log, log
            assert 'Lease %s: active' % lease.uuid in log, log
            assert seen.conductor_affinity is None
            assert seen.last_error is None
            assert sorted(seen.nodes) == sorted(n.uuid for n in nodes)
            for node in nodes:
                assert node_obj.Node.get(db, node.id).lessee == 'tenant'
            assert 'Lease %s: active' % lease.uuid not in cluster.output(out)
    finally:
        db.dispose()
