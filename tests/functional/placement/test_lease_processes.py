# SPDX-License-Identifier: Apache-2.0
"""A conductor process killed with SIGKILL at each step of a lease in the
real Placement (gunicorn): another conductor's take-over, or
``ferrum-placement audit --heal``, completes the step, and afterwards the
audits (nodes, allocations' consumers, leases) find nothing and no class,
inventory or consumer is left behind."""

import datetime
import signal
import subprocess
import sys

import pytest
import sqlalchemy as sa

from ferrum.allocation import takeover
from ferrum.api import app as api_app
from ferrum.cmd import placement as placement_cmd
from ferrum.conductor import service
from ferrum.leases import engine
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import base
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import lease as lease_obj
from ferrum.placement import client as client_mod
from ferrum.placement import consumer_audit
from ferrum.placement import lease_audit
from ferrum.placement import releases
from ferrum.placement import reservations
from ferrum.placement import sync
from ferrum.placement.resources import classes
from ferrum.placement.resources import providers
from tests.functional.leases.sites import iso
from tests.functional.placement.deployment import killed_conductor_config
from tests.functional.placement.scenario import RC
from tests.functional.placement.scenario import auditor
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import no_drift
from tests.functional.placement.scenario import nodes
from tests.functional.placement.scenario import resources
from tests.polling import wait_for

#: The conductor that dies: it runs one lease step (or an allocation
#: under the lease) and hangs at the patched point, after writing the
#: marker file.
_CONDUCTOR = '''
import sys, threading
from ferrum import conf as ferrum_conf
from ferrum.conductor import service
from ferrum.placement import claims
from ferrum.placement import reservations
from ferrum.leases import engine
from ferrum.objects import allocation as allocation_obj

conf = ferrum_conf.load_for_program(['--config-file', sys.argv[1]])
marker, step = sys.argv[2], sys.argv[3]

def hang():
    open(marker, 'w').close()
    threading.Event().wait()

def patch(owner, name, after):
    original = getattr(owner, name)
    def patched(*args, **kwargs):
        if not after:
            hang()
        result = original(*args, **kwargs)
        hang()
        return result
    setattr(owner, name, patched)

if step == 'class':  # the start: the class made, nothing claimed yet
    patch(reservations, 'ensure_class', after=True)
elif step == 'claim':  # the start: claimed in Placement, not yet active
    patch(reservations, 'claim_lease', after=True)
elif step == 'move':  # the node moved in Placement, not in the database
    patch(allocation_obj.Allocation, 'claim', after=False)
elif step == 'give-back':  # deleted in the database, not in Placement
    patch(claims, 'release', after=False)
elif step == 'release':  # the end: released in Placement, nodes not back
    patch(reservations, 'release_all', after=True)
elif step == 'ended':  # ended, its class not yet deleted
    patch(reservations, 'delete_class', after=False)
svc = service.ConductorService(conf)
svc.start(start_periodics=False)
if step == 'move':
    svc.manager.create_allocation(
        {'resource_class': 'bm', 'owner': 'p1', 'name': 'stuck'}, [])
elif step == 'give-back':
    svc.manager.destroy_allocation('used')
else:
    engine.run(svc.ctx)
sys.exit('step %s: the patched point was never reached' % step)
'''


@pytest.fixture
def site():
    """Where ferrum's database is; some steps run on both."""
    return 'sqlite'


@pytest.fixture
def db(request, site, db):
    return request.getfixturevalue('pg_db') if site == 'postgresql' else db


@pytest.fixture
def survivor(tmp_path, conf, db, site, placement_process):
    """The conductor that lives on (in this process), and the config file
    of the one that dies."""
    path = killed_conductor_config(
        tmp_path, placement_process.endpoint,
        db.url if site == 'postgresql' else '')
    conf(['--config-file', str(path)])
    conf.set_override('host', 'survivor')
    # The outbox rows the dead conductor held are taken over after this.
    conf.set_override('heartbeat_timeout', 2, group='conductor')
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    svc.config_file = str(path)
    yield svc
    svc.stop()


def _book(svc, db):
    """A lease of both nodes, in Placement (the API made its class)."""
    app = api_app.create_app(svc.conf, db, svc.manager)
    app.testing = True
    end = base.utcnow() + datetime.timedelta(hours=1)
    resp = app.test_client().post('/v1/leases', json={
        'project': 'p1', 'resource_class': 'bm', 'count': 2,
        'end': iso(end)})
    assert resp.status_code == 201, resp.json
    return app.test_client(), resp.json['uuid']


def _kill_at(svc, tmp_path, step):
    """Run the dying conductor to ``step``, SIGKILL it, and make it dead
    for everyone (its heartbeat long gone)."""
    marker = tmp_path / 'stuck'
    proc = subprocess.Popen([sys.executable, '-c', _CONDUCTOR,
                             svc.config_file, str(marker), step])
    try:
        wait_for(lambda: marker.exists() or proc.poll() is not None,
                 timeout=60, what='the conductor to reach step %s' % step)
        assert marker.exists(), 'the conductor exited: see conductor.log'
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with svc.ctx.db.writer() as conn:
        conn.execute(sa.update(conductor_obj.TABLE).where(
            conductor_obj.TABLE.c.hostname == 'killed-conductor').values(
                heartbeat_at=datetime.datetime(2020, 1, 1)))


def _settle(svc, db, lease_uuid, done):
    """Run the survivor's engine (take-over included) until ``done``."""
    def step():
        engine.run(svc.ctx)
        converged(db, timeout=30)
        return done(lease_obj.Lease.get(db, lease_uuid))
    wait_for(step, timeout=60, interval=0.1,
             what='the lease\'s step to be completed')
    wait_for(lambda: releases.backlog(db) == 0, timeout=30,
             what='the queued consumer releases')


def _classes(client):
    return classes.names(client, reservations.PREFIX)


def _nothing_left(conf, db, client, lease_uuid, made):
    """The audits agree, and nothing of the lease is in Placement."""
    no_drift(conf, db, client)
    assert lease_audit.drift(auditor(conf, db, client, True)) == []
    assert _classes(client) == set()
    assert resources(client, lease_uuid) == {}
    for node in made:
        inventories = client.get('/resource_providers/%s/inventories'
                                 % node.uuid)['inventories']
        assert set(inventories) == {RC}
        assert set(providers.consumers_of(client, node.uuid)) == set()


def _running_as_booked(conf, db, client, lease_uuid):
    """The lease is active, its consumer holds every node no allocation
    took, and the audits agree."""
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'active', lease.last_error
    taken = {a.node_uuid: a.uuid for a in allocation_obj.Allocation.list(db)
             if a.state == 'active'}
    assert resources(client, lease_uuid) == {
        node: {RC: 1} for node in lease.nodes if node not in taken}
    name = reservations.class_name(lease_uuid)
    for node, consumer in taken.items():
        assert resources(client, consumer) == {node: {RC: 1, name: 1}}
    assert _classes(client) == {name}
    no_drift(conf, db, client)
    assert lease_audit.drift(auditor(conf, db, client, True)) == []


@pytest.mark.parametrize('step, site', [
    ('class', 'sqlite'), ('claim', 'sqlite'), ('claim', 'postgresql')])
def test_sigkill_during_the_start(survivor, db, tmp_path, step):
    nodes(db, 2)
    _api, lease_uuid = _book(survivor, db)
    _kill_at(survivor, tmp_path, step)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'starting'
    client = client_mod.PlacementClient(survivor.conf)
    claimed = resources(client, lease_uuid)
    assert set(claimed) == (set(lease.nodes) if step == 'claim' else set())
    _settle(survivor, db, lease_uuid, lambda lease: lease.status == 'active')
    _running_as_booked(survivor.conf, db, client, lease_uuid)


@pytest.mark.parametrize('site', ['sqlite', 'postgresql'])
def test_sigkill_during_a_move_under_the_lease(survivor, db, tmp_path):
    nodes(db, 2)
    _api, lease_uuid = _book(survivor, db)
    _settle(survivor, db, lease_uuid, lambda lease: lease.status == 'active')
    _kill_at(survivor, tmp_path, 'move')
    stuck = allocation_obj.Allocation.get(db, 'stuck')
    assert stuck.state == 'allocating'
    client = client_mod.PlacementClient(survivor.conf)
    (moved,) = resources(client, stuck.uuid)
    assert moved not in resources(client, lease_uuid)
    takeover.AllocationTakeover().check_orphaned_allocations(survivor.ctx)
    stuck = allocation_obj.Allocation.get(db, 'stuck')
    assert stuck.state == 'active', stuck.last_error
    converged(db, timeout=30)
    _running_as_booked(survivor.conf, db, client, lease_uuid)


def test_sigkill_during_a_give_back_under_the_lease(survivor, db, tmp_path):
    nodes(db, 2)
    _api, lease_uuid = _book(survivor, db)
    _settle(survivor, db, lease_uuid, lambda lease: lease.status == 'active')
    used = survivor.manager.create_allocation(
        {'resource_class': 'bm', 'owner': 'p1', 'name': 'used'}, [])
    assert used.state == 'active', used.last_error
    _kill_at(survivor, tmp_path, 'give-back')
    assert allocation_obj.Allocation.list(db) == []
    client = client_mod.PlacementClient(survivor.conf)
    assert set(resources(client, used.uuid)) == {used.node_uuid}
    # The release queued with the deletion: the survivor's sync thread
    # gives the node back to the lease's consumer.
    wait_for(lambda: releases.backlog(db) == 0, timeout=30,
             what='the queued release of the allocation\'s consumer')
    converged(db, timeout=30)
    _running_as_booked(survivor.conf, db, client, lease_uuid)


@pytest.mark.parametrize('step, site', [
    ('release', 'sqlite'), ('release', 'postgresql'), ('ended', 'sqlite')])
def test_sigkill_during_the_end(survivor, db, tmp_path, step):
    made = nodes(db, 2)
    api, lease_uuid = _book(survivor, db)
    _settle(survivor, db, lease_uuid, lambda lease: lease.status == 'active')
    if step == 'release':  # its consumer is released with the lease's
        used = survivor.manager.create_allocation(
            {'resource_class': 'bm', 'owner': 'p1'}, [])
        assert used.state == 'active', used.last_error
    assert api.delete('/v1/leases/%s' % lease_uuid).status_code == 204
    _kill_at(survivor, tmp_path, step)
    lease = lease_obj.Lease.get(db, lease_uuid)
    client = client_mod.PlacementClient(survivor.conf)
    assert resources(client, lease_uuid) == {}
    if step == 'release':
        assert lease.status == 'ending'
        assert resources(client, used.uuid) == {}
        # In flight: neither the allocation's consumer, released with the
        # lease's, nor the lease's is a finding (nor claimed again).
        assert consumer_audit.drift(auditor(survivor.conf, db, client)) == []
        assert consumer_audit.claim_missing_unreserved(
            sync.Pusher(survivor.conf, db, client)) == 0
        assert lease_audit.drift(
            auditor(survivor.conf, db, client, True)) == []
        _settle(survivor, db, lease_uuid, lambda lease: (
            lease.status == 'ended' and not lease.placement_class))
    else:
        assert lease.status == 'ended' and lease.placement_class
        assert _classes(client) == {reservations.class_name(lease_uuid)}
        # No take-over for a lease that is over: the audit heals it.
        config = survivor.config_file
        assert placement_cmd.main(['--config-file', config, 'audit',
                                   '--heal']) == 0
        assert not lease_obj.Lease.get(db, lease_uuid).placement_class
    converged(db, timeout=30)
    _nothing_left(survivor.conf, db, client, lease_uuid, made)
