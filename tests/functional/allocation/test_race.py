# SPDX-License-Identifier: Apache-2.0
"""Two real ferrum processes x 8 threads allocate 1000 nodes, then one is
killed.

Both processes serve the API and run a conductor on one database (SQLite
file or real PostgreSQL), as the all-in-one ``ferrum`` does. Clients send
allocations with mixed traits and candidate lists to both. Halfway, one
process gets SIGKILL; every allocation it held must then reach ``active``
or ``error`` through the survivor's take-over within one check interval of
the dead conductor's heartbeat expiring. At the end no node has two
allocations, no allocation is lost or stuck, and no response was a 5xx.
"""

import contextlib
import itertools
import os
import random
import signal
import subprocess
import threading
import time

import pytest
import requests
import sqlalchemy as sa

from ferrum import conf as ferrum_conf
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj
from tests import process
from tests.functional import server
from tests.polling import wait_for

NODES = 1000
THREADS_PER_PROCESS = 8
HEARTBEAT_TIMEOUT = 3
CHECK_INTERVAL = 1
V = {'X-OpenStack-Ironic-API-Version': '1.65'}
_TRAITS = ([], ['CUSTOM_A'], ['CUSTOM_A', 'CUSTOM_B'])


def _populate(url: str, tmp_path) -> list[str]:
    conf = ferrum_conf.new_conf()
    conf.set_override('state_path', str(tmp_path))
    db = db_api.Database(conf, url=url)
    migration.upgrade(db.engine)
    uuids = []
    fake = {'%s_interface' % kind: 'fake' for kind in (
        'power', 'management', 'boot', 'deploy', 'inspect', 'vendor')}
    for index in range(NODES):
        node = node_obj.Node.create(db, dict(
            fake, driver='fake-hardware', provision_state='available',
            power_state='power off', name='node-%04d' % index,
            resource_class='gold' if index % 10 else 'silver'))
        if _TRAITS[index % 3]:
            trait_obj.set_for_node(db, node.id, _TRAITS[index % 3])
        uuids.append(node.uuid)
    db.dispose()
    return uuids


@contextlib.contextmanager
def _ferrum(tmp_path, name: str, url: str):
    """A ``ferrum`` process called ``name``; yields (process, base URL)."""
    directory = tmp_path / name
    directory.mkdir()
    port = process.free_port()
    config = server.write_config(directory, port, {
        'DEFAULT': {'host': name},
        'conductor': {'heartbeat_interval': '1',
                      'heartbeat_timeout': str(HEARTBEAT_TIMEOUT),
                      'check_allocations_interval': str(CHECK_INTERVAL),
                      'sync_power_state_interval': '0'}}, url)
    output = directory / 'ferrum.out'
    base = 'http://127.0.0.1:%d' % port
    with open(output, 'w') as out, process.running(
            [os.path.join(server.BIN, 'ferrum'), '--config-file',
             str(config)], stdout=out, stderr=subprocess.STDOUT,
            cwd=directory) as proc:
        if not server._wait_ready(proc, base):
            pytest.fail('%s did not start:\n%s' % (name, output.read_text()))
        yield proc, base


class _Clients:
    """Threads that allocate against one API until told to stop."""

    def __init__(self, base: str, uuids: list[str], budget: itertools.count):
        self.base, self.uuids, self.budget = base, uuids, budget
        self.statuses: list[int] = []
        self.created: list[str] = []
        self.failures: list[str] = []
        self.dead = threading.Event()
        self.lock = threading.Lock()

    def body(self, rng: random.Random) -> dict:
        kind = rng.randrange(4)
        body: dict = {'resource_class': 'gold' if kind else 'silver'}
        if kind in (1, 2):
            body['traits'] = _TRAITS[kind]
        if kind == 3:
            body['candidate_nodes'] = rng.sample(self.uuids, 20)
        return body

    def run(self, seed: int) -> None:
        rng = random.Random(seed)
        session = requests.Session()
        while next(self.budget) < NODES and not self.dead.is_set():
            try:
                response = session.post(self.base + '/v1/allocations',
                                        json=self.body(rng), headers=V,
                                        timeout=30)
            except requests.RequestException as exc:
                # The process was killed (maybe mid-answer): only the side
                # that was killed may see this.
                if not self.dead.is_set():
                    self.failures.append(repr(exc))
                return
            with self.lock:
                self.statuses.append(response.status_code)
                if response.status_code == 201:
                    self.created.append(response.json()['uuid'])


def _check_consistency(db: db_api.Database) -> dict:
    nodes, allocations = node_obj.TABLE, allocation_obj.TABLE
    with db.reader() as conn:
        rows = conn.execute(sa.select(
            allocations.c.uuid, allocations.c.id, allocations.c.state,
            allocations.c.node_id)).all()
        holders = conn.execute(sa.select(
            nodes.c.id, nodes.c.instance_uuid, nodes.c.allocation_id).where(
                nodes.c.allocation_id.isnot(None))).all()
    by_id = {row.id: row for row in rows}
    states = [row.state for row in rows]
    active = [row for row in rows if row.state == 'active']
    assert 'allocating' not in states
    node_ids = [row.node_id for row in active]
    assert len(node_ids) == len(set(node_ids)), 'a node has two allocations'
    assert len(holders) == len(active)
    for holder in holders:
        allocation = by_id[holder.allocation_id]
        assert allocation.state == 'active'
        assert allocation.node_id == holder.id
        assert holder.instance_uuid == allocation.uuid
    return {'active': len(active), 'error': states.count('error')}


@pytest.mark.parametrize('backend', ['sqlite', 'postgresql'])
def test_two_processes_race_and_survive_a_kill(backend, tmp_path, request):
    url = ('sqlite:///%s' % (tmp_path / 'shared.sqlite') if backend == 'sqlite'
           else request.getfixturevalue('pg_url'))
    uuids = _populate(url, tmp_path)
    budget = itertools.count()
    with _ferrum(tmp_path, 'conductor-a', url) as (proc_a, base_a), \
            _ferrum(tmp_path, 'conductor-b', url) as (proc_b, base_b):
        clients = [_Clients(base_a, uuids, budget),
                   _Clients(base_b, uuids, budget)]
        threads = [threading.Thread(target=c.run, args=(i * 100 + t,))
                   for i, c in enumerate(clients)
                   for t in range(THREADS_PER_PROCESS)]
        for thread in threads:
            thread.start()
        wait_for(lambda: len(clients[1].statuses) >= NODES // 4, 120,
                 interval=0.01, what='a quarter of the allocations on b')
        conf = ferrum_conf.new_conf()
        conf.set_override('state_path', str(tmp_path))
        db = db_api.Database(conf, url=url)
        victim = conductor_obj.get(db, 'conductor-b')
        # What a crash leaves besides in-flight work: accepted rows that
        # no worker has started yet.
        stranded = [allocation_obj.Allocation.create(db, {
            'resource_class': 'gold', 'conductor_affinity': victim.id,
            'name': 'stranded-%d' % i}) for i in range(5)]
        # Requests in flight to b when it dies fail; new ones stop.
        clients[1].dead.set()
        proc_b.send_signal(signal.SIGKILL)
        proc_b.wait(10)
        killed_at = time.monotonic()
        held = allocation_obj.Allocation.ids_allocating(db, victim.id)
        assert len(held) >= len(stranded)
        wait_for(lambda: not allocation_obj.Allocation.ids_allocating(
            db, victim.id), HEARTBEAT_TIMEOUT + 2 * CHECK_INTERVAL + 5,
            interval=0.05, what='take-over of the killed conductor')
        taken_over_s = time.monotonic() - killed_at
        for thread in threads:
            thread.join(120)
            assert not thread.is_alive()
        assert clients[0].failures == [] and clients[1].failures == []
        statuses = clients[0].statuses + clients[1].statuses
        assert statuses and not [s for s in statuses if s >= 500]
        # The survivor moves each row, then runs it to its end, one after
        # the other: the last one moved may still be running here.
        wait_for(lambda: all(
            allocation_obj.Allocation.get(db, allocation_id).state in (
                'active', 'error') for allocation_id in held), 60,
            interval=0.05, what='every taken-over allocation to finish')
        # Nothing answered with a 201 was lost, and none is still pending.
        created = clients[0].created + clients[1].created
        assert len(created) > NODES // 2
        finished = {row.uuid: row.state for row in
                    allocation_obj.Allocation.list(db)}
        assert [u for u in created if u not in finished] == []
        assert {finished[u] for u in created} <= {'active', 'error'}
        counts = _check_consistency(db)
        assert counts['active'] > NODES // 2
        # Within one check interval of the heartbeat expiring (plus the
        # heartbeat period, which decides when it is seen as expired).
        assert taken_over_s <= HEARTBEAT_TIMEOUT + 1 + CHECK_INTERVAL + 2
        db.dispose()
        proc_a.send_signal(signal.SIGTERM)
        assert proc_a.wait(60) == 0
