# SPDX-License-Identifier: Apache-2.0
"""The placement allocation backend with the real Placement under gunicorn:
a foreign consumer claiming as nova does, Placement killed, and a conductor
process killed with SIGKILL between its Placement claim and its database
write."""

import datetime
import random
import signal
import subprocess
import sys
import threading
import time
import uuid

import sqlalchemy as sa

from ferrum.allocation import takeover
from ferrum.conductor import service
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import releases
from ferrum.placement import status
from ferrum.placement.resources import providers
from tests.functional.placement.deployment import killed_conductor_config
from tests.functional.placement.scenario import RC
from tests.functional.placement.scenario import consumer_body
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import holders
from tests.functional.placement.scenario import no_drift
from tests.functional.placement.scenario import nodes
from tests.functional.placement.scenario import put_consumer
from tests.polling import wait_for


def _nova(client, stop, held, tried, failures):
    """nova's claim: candidates, then PUT with consumer_generation null.

    Every consumer tried is in ``tried``: on a loaded machine a PUT whose
    answer was lost is retried and refused as a conflict, yet the first
    one landed, so a conflict does not prove the consumer holds nothing.
    """
    while not stop.is_set():
        try:
            offered = providers.allocation_candidates(client, RC)
        except errors.PlacementUnavailable as exc:
            failures.append(exc)
            return
        if not offered:
            return
        consumer = str(uuid.uuid4())
        tried.append(consumer)
        try:
            put_consumer(client, consumer, random.choice(offered), RC,
                         'nova', 'nova')
        except errors.PlacementConflict:
            continue  # someone was faster: ask again, as nova retries
        held.append(consumer)


def _ferrum(manager, made, stop):
    while not stop.is_set():
        allocation = manager.create_allocation({'resource_class': 'bm'}, [])
        if allocation.state != 'active':
            return
        made.append(allocation)


def test_no_node_is_held_by_ferrum_and_a_foreign_consumer(gbackend, db,
                                                          gconf):
    fleet = nodes(db, 30, timeout=60)
    client = client_mod.PlacementClient(gconf)
    stop = threading.Event()
    nova_held, nova_tried, nova_errors, made = [], [], [], []
    threads = [threading.Thread(target=_nova, args=(
        client, stop, nova_held, nova_tried, nova_errors))
        for _ in range(2)]
    threads += [threading.Thread(target=_ferrum, args=(
        gbackend.manager, made, stop)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    stop.set()
    # Every claimer stopped before Placement is read: a thread still in a
    # PUT when the snapshot was taken would hold a node it does not show.
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive()
    assert nova_errors == []
    assert nova_held and made, 'both sides should have won some nodes'
    # Placement's side: one consumer per node, every node taken.
    by_node = {node.uuid: holders(client, node.uuid) for node in fleet}
    assert all(len(held) == 1 for held in by_node.values()), by_node
    # Every node is ferrum's or nova's: the holders that are not ferrum's
    # allocations are consumers nova tried, among them all it knows it won.
    foreign = set().union(*by_node.values()) - {a.uuid for a in made}
    assert set(nova_held) <= foreign <= set(nova_tried)
    assert len(foreign) + len(made) == len(fleet)
    # ferrum's side: each allocation's node holds its consumer only, and
    # no node nova holds has a ferrum allocation.
    nova = foreign
    for allocation in allocation_obj.Allocation.list(db):
        if allocation.state == 'active':
            assert by_node[allocation.node_uuid] == {allocation.uuid}
        else:  # the last tries, once no node was left: nothing held
            assert allocation.state == 'error'
            assert consumer_body(client, allocation.uuid)['allocations'] == {}
    for node in node_obj.Node.list(db):
        if by_node[node.uuid] & nova:
            assert node.allocation_id is None
    converged(db, timeout=60)
    no_drift(gconf, db, client)


def test_placement_killed_mid_run(gbackend, db, gconf, placement_process):
    nodes(db, 3, timeout=60)
    manager = gbackend.manager
    kept = manager.create_allocation({'resource_class': 'bm'}, [])
    assert kept.state == 'active'
    placement_process.kill()
    started = time.monotonic()
    failed = manager.create_allocation({'resource_class': 'bm'}, [])
    assert failed.state == 'error'
    assert time.monotonic() - started < 5  # fails fast, never hangs
    assert 'Placement could not be reached' in failed.last_error
    manager.destroy_allocation(kept.uuid)  # ferrum's side goes on
    assert releases.backlog(db) >= 1  # kept's consumer, queued
    assert status.summary(gconf, db)['consumer_releases'] >= 1
    placement_process.start()
    client = client_mod.PlacementClient(gconf)
    wait_for(lambda: releases.backlog(db) == 0, timeout=60,
             what='the queued releases to drain')
    assert consumer_body(client, kept.uuid)['allocations'] == {}
    assert consumer_body(client, failed.uuid)['allocations'] == {}
    converged(db, timeout=60)
    no_drift(gconf, db, client)


_ALLOCATOR = '''
import sys, threading
from ferrum import conf as ferrum_conf
from ferrum.conductor import service
from ferrum.objects import allocation as allocation_obj

conf = ferrum_conf.load_for_program(['--config-file', sys.argv[1]])
marker = sys.argv[2]
claim = allocation_obj.Allocation.claim
hung = threading.Event()
others_ran = threading.Semaphore(0)

def claim_then_hang(self, *args, **kwargs):
    # The Placement claim is made; die before the database hears of it.
    if self.name == 'stuck':
        hung.set()
        threading.Event().wait()
    return claim(self, *args, **kwargs)

allocation_obj.Allocation.claim = claim_then_hang
svc = service.ConductorService(conf)
svc.start(start_periodics=False)

def stuck():
    svc.manager.create_allocation({'resource_class': 'bm', 'name': 'stuck'},
                                  [])

def others(count):
    # Other allocations in flight around the kill; at most 2 x 10 of the
    # 40 nodes, so "stuck" always had one.
    hung.wait()
    for number in range(count):
        svc.manager.create_allocation({'resource_class': 'bm'}, [])
        if number == 0:
            others_ran.release()

threading.Thread(target=stuck, daemon=True).start()
for _ in range(2):
    threading.Thread(target=others, args=(10,), daemon=True).start()
hung.wait()
others_ran.acquire()
others_ran.acquire()
open(marker, 'w').close()
threading.Event().wait()
'''


def test_sigkill_mid_allocation_leaves_no_orphan(tmp_path, conf, db,
                                                 placement_process):
    path = killed_conductor_config(tmp_path, placement_process.endpoint)
    conf(['--config-file', str(path)])
    conf.set_override('heartbeat_timeout', 2, group='conductor')
    first = service.ConductorService(conf, db=db)
    first.start(start_periodics=False)
    nodes(db, 40, timeout=60)
    first.stop()
    marker = tmp_path / 'stuck'
    proc = subprocess.Popen([sys.executable, '-c', _ALLOCATOR, str(path),
                             str(marker)])
    try:
        wait_for(marker.exists, timeout=60,
                 what='the claim of allocation "stuck" in Placement')
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    stuck = allocation_obj.Allocation.get(db, 'stuck')
    assert stuck.state == 'allocating'
    client = client_mod.PlacementClient(conf)
    (orphan_node,) = consumer_body(client, stuck.uuid)['allocations']
    with db.writer() as conn:  # dead for everyone from now on
        conn.execute(sa.update(conductor_obj.TABLE).where(
            conductor_obj.TABLE.c.hostname == 'killed-conductor').values(
                heartbeat_at=datetime.datetime(2020, 1, 1)))
    survivor = service.ConductorService(conf, db=db)
    survivor.start(start_periodics=False)
    try:
        takeover.AllocationTakeover().check_orphaned_allocations(
            survivor.ctx)
        assert allocation_obj.Allocation.list(
            db, {'state': 'allocating'}) == []
        stuck = allocation_obj.Allocation.get(db, 'stuck')
        assert stuck.state == 'active', stuck.last_error
        held = consumer_body(client, stuck.uuid)['allocations']
        assert list(held) == [stuck.node_uuid]
        if stuck.node_uuid != orphan_node:
            assert stuck.uuid not in holders(client, orphan_node)
        converged(db, timeout=60)
        no_drift(conf, db, client)
    finally:
        survivor.stop()
