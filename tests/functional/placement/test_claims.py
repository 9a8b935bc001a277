# SPDX-License-Identifier: Apache-2.0
"""Each queued change is pushed by exactly one conductor; a dead conductor's
claims are taken over."""

import datetime
import threading
import uuid

import pytest
import sqlalchemy as sa

from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.objects import base
from ferrum.objects import node as node_obj
from ferrum.placement import client as client_mod
from ferrum.placement import outbox
from ferrum.placement import service as placement_service
from ferrum.placement import worker
from tests.functional.placement.deployment import PlacementProcess
from tests.functional.placement.deployment import configure
from tests.functional.placement.scenario import assert_no_drift
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import provider
from tests.functional.placement.scenario import reserved
from tests.polling import wait_for


def _claim_all(db, host, at):
    with db.writer() as conn:
        conn.execute(sa.update(outbox.TABLE).values(claimed_by=host,
                                                    claimed_at=at))


def test_a_dead_conductor_s_claims_are_taken_over(pconf, db, pclient):
    node = node_obj.Node.create(db, {'driver': 'fake-hardware'})
    handle = placement_service.PlacementService(
        pconf, db, client_mod.PlacementClient(pconf))
    sync = worker.SyncWorker(pconf, db, 'live', handle)
    # Claimed a moment ago by a conductor that is alive: left alone.
    _claim_all(db, 'busy', base.utcnow())
    assert sync.drain_once() == 0
    assert provider(pclient, node.uuid) is None
    # Claimed longer ago than a heartbeat timeout: that conductor died.
    timeout = pconf.conductor.heartbeat_timeout
    _claim_all(db, 'dead', base.utcnow() - datetime.timedelta(
        seconds=timeout + 1))
    assert sync.drain_once() == 1
    assert outbox.backlog(db).size == 0
    assert provider(pclient, node.uuid) is not None
    assert_no_drift(pconf, db, pclient)


@pytest.fixture
def placement_on_postgresql(tmp_path, postgresql_server):
    """Placement under gunicorn, two workers, on a PostgreSQL database."""
    dbname = 'placement_%s' % uuid.uuid4().hex[:12]
    postgresql_server.create_database(dbname)
    running = PlacementProcess(tmp_path / 'placement',
                               db_url=postgresql_server.url(dbname))
    running.workers = 2
    running.start()
    yield running
    running.kill()
    postgresql_server.drop_database(dbname)


def test_two_conductors_on_postgresql_push_each_change_once(
        conf, pg_db, placement_on_postgresql):
    """Both drain one queue on PostgreSQL into a Placement on PostgreSQL."""
    configure(conf, placement_on_postgresql.endpoint)
    conf.set_override('poll_interval', 0.02, group='placement')
    pconf = conf
    pclient = client_mod.PlacementClient(conf)
    pushes = []
    lock = threading.Lock()
    services = []
    for host in ('conductor-a', 'conductor-b'):
        pconf.set_override('host', host)
        svc = service.ConductorService(
            pconf, db=db_api.Database(pconf, url=pg_db.url))
        svc.start(start_periodics=False)

        def recorded(head, outcome, host=host):
            with lock:
                pushes.append((host, head.id, head.node_uuid))
        svc.placement.on_pushed = recorded
        services.append(svc)
    db = services[0].ctx.db
    try:
        nodes = [node_obj.Node.create(db, {'driver': 'fake-hardware',
                                           'resource_class': 'bm'})
                 for _ in range(20)]
        for _round in range(3):
            for node in nodes:
                fresh = node_obj.Node.get(db, node.id)
                fresh.maintenance = not fresh.maintenance
                fresh.save()
        converged(db, timeout=60)
        heads = [head for _host, head, _node in pushes]
        assert len(heads) == len(set(heads)), 'a change was pushed twice'
        assert {host for host, _h, _n in pushes} == {'conductor-a',
                                                     'conductor-b'}
        assert_no_drift(pconf, db, pclient)
    finally:
        for svc in services:
            db = svc.ctx.db
            svc.stop()
            db.dispose()


def test_postgresql_one_statement_release_is_queued(pconf, pg_db, pclient):
    """The release that frees the node inside a CTE is recorded too."""
    svc = service.ConductorService(pconf, db=pg_db)
    svc.start(start_periodics=False)
    try:
        node = svc.manager.create_node({
            'driver': 'fake-hardware', 'resource_class': 'bm',
            'provision_state': 'available', 'power_state': 'power off'})
        allocation = svc.manager.create_allocation({'resource_class': 'bm'},
                                                   [])
        wait_for(lambda: node_obj.Node.get(pg_db, node.id).allocation_id,
                 what='the allocation to claim the node')
        converged(pg_db)
        assert reserved(pclient, node.uuid) == 1
        svc.manager.destroy_allocation(allocation.uuid)
        assert node_obj.Node.get(pg_db, node.id).allocation_id is None
        converged(pg_db)
        assert reserved(pclient, node.uuid) == 0
        assert_no_drift(pconf, pg_db, pclient)
    finally:
        svc.stop()
