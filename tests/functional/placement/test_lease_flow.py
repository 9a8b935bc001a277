# SPDX-License-Identifier: Apache-2.0
"""A lease in the real Placement (in-process): class, start, moves, end."""

import datetime

import pytest

from ferrum.leases import engine
from ferrum.objects import lease as lease_obj
from ferrum.placement import reservations
from tests.functional.leases.sites import iso
from tests.functional.placement.scenario import RC
from tests.functional.placement.scenario import classes
from tests.functional.placement.scenario import consumer_body
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import foreign_claim
from tests.functional.placement.scenario import make_api
from tests.functional.placement.scenario import nodes
from tests.functional.placement.scenario import resources


def test_lease_in_placement_start_move_end(backend, clock, api, db, pclient,
                                           pconf):
    made = nodes(db, 3)
    end = clock.after(3600)
    resp = api.post('/v1/leases', json={
        'project': 'p1', 'resource_class': 'bm', 'count': 2,
        'end': iso(end)})
    assert resp.status_code == 201, resp.json
    lease_uuid = resp.json['uuid']
    name = reservations.class_name(lease_uuid)
    # The API calls no Placement: the engine's run creates the class, and
    # the lease shows it from then on.
    assert resp.json['reservation_class'] is None
    ctx = backend.ctx
    engine.run(ctx)
    assert name in classes(pclient)
    assert api.get('/v1/leases/%s' % lease_uuid).json[
        'reservation_class'] == name
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'active', lease.last_error
    held = resources(pclient, lease_uuid)
    assert held == {n: {RC: 1} for n in lease.nodes}
    converged(db)
    for node in lease.nodes:
        inv = pclient.get('/resource_providers/%s/inventories' % node)
        assert inv['inventories'][name]['total'] == 1
        assert inv['inventories'][name]['reserved'] == 0
    # A ferrum allocation under the lease takes a node from it.
    alloc = backend.manager.create_allocation(
        {'resource_class': 'bm', 'owner': 'p1'}, [])
    assert alloc.state == 'active', alloc.last_error
    assert alloc.node_uuid in lease.nodes
    assert resources(pclient, alloc.uuid) == {
        alloc.node_uuid: {RC: 1, name: 1}}
    assert alloc.node_uuid not in resources(pclient, lease_uuid)
    # Deleted, it gives the node back to the lease.
    backend.manager.destroy_allocation(alloc.uuid)
    assert resources(pclient, alloc.uuid) == {}
    assert resources(pclient, lease_uuid) == {n: {RC: 1}
                                              for n in lease.nodes}
    # The end.
    api.delete('/v1/leases/%s' % lease_uuid)
    engine.run(ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'ended', lease.last_error
    assert resources(pclient, lease_uuid) == {}
    converged(db)
    engine.run(ctx)
    assert name not in classes(pclient)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert not lease.placement_class
    assert api.get('/v1/leases/%s' % lease_uuid).json[
        'reservation_class'] is None
    for node in made:
        inv = pclient.get('/resource_providers/%s/inventories' % node.uuid)
        assert set(inv['inventories']) == {RC}


@pytest.fixture
def db_backend(synced):
    """A conductor with [placement] and the database allocation backend."""
    return synced


def test_lease_in_placement_with_the_database_backend(db_backend, clock, db,
                                                      pclient, pconf):
    api = make_api(pconf, db, db_backend.manager)
    nodes(db, 2)
    resp = api.post('/v1/leases', json={
        'project': 'p1', 'resource_class': 'bm', 'count': 2,
        'end': iso(clock.after(3600))})
    assert resp.status_code == 201, resp.json
    lease_uuid = resp.json['uuid']
    name = reservations.class_name(lease_uuid)
    ctx = db_backend.ctx
    engine.run(ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'active', lease.last_error
    assert resources(pclient, lease_uuid) == {n: {RC: 1}
                                              for n in lease.nodes}
    # An allocation of the lessee has no consumer with this backend: the
    # node's reservation unit is reserved instead, so nothing claims it
    # through the class.
    alloc = db_backend.manager.create_allocation(
        {'resource_class': 'bm', 'owner': 'p1'}, [])
    assert alloc.state == 'active', alloc.last_error
    assert resources(pclient, alloc.uuid) == {}
    converged(db)
    inv = pclient.get('/resource_providers/%s/inventories' % alloc.node_uuid)
    assert inv['inventories'][name]['reserved'] == 1
    other = next(n for n in lease.nodes if n != alloc.node_uuid)
    inv = pclient.get('/resource_providers/%s/inventories' % other)
    assert inv['inventories'][name]['reserved'] == 0
    api.delete('/v1/leases/%s' % lease_uuid)
    engine.run(ctx)
    # The first run released the lease's claim and the allocation.
    assert resources(pclient, lease_uuid) == {}
    engine.run(ctx)
    assert lease_obj.Lease.get(db, lease_uuid).status == 'ended'
    converged(db)
    engine.run(ctx)
    assert name not in classes(pclient)


def test_a_lease_gets_its_class_at_start(
        backend, clock, api, db, pclient):
    nodes(db, 1)
    resp = api.post('/v1/leases', json={
        'project': 'p1', 'resource_class': 'bm',
        'end': iso(clock.after(3600))})
    assert resp.status_code == 201, resp.json
    name = reservations.class_name(resp.json['uuid'])
    assert name not in classes(pclient)
    # Shown only once it exists: a flavor naming it now would match
    # nothing.
    assert resp.json['reservation_class'] is None
    url = '/v1/leases/%s' % resp.json['uuid']
    assert api.get(url).json['reservation_class'] is None
    engine.run(backend.ctx)
    lease = lease_obj.Lease.get(db, resp.json['uuid'])
    assert lease.status == 'active', lease.last_error
    assert name in classes(pclient)
    assert api.get(url).json['reservation_class'] == name


def test_a_pending_lease_gets_its_class_at_the_next_run(
        backend, clock, api, db, pclient):
    """At the engine's next run, long before its start: from then on the
    lease shows it and a flavor can name it."""
    nodes(db, 1)
    start = clock.after(86400)
    resp = api.post('/v1/leases', json={
        'project': 'p1', 'resource_class': 'bm', 'start': iso(start),
        'end': iso(start + datetime.timedelta(hours=1))})
    assert resp.status_code == 201, resp.json
    assert resp.json['reservation_class'] is None
    engine.run(backend.ctx)
    url = '/v1/leases/%s' % resp.json['uuid']
    shown = api.get(url).json
    assert shown['status'] == 'pending'
    name = reservations.class_name(resp.json['uuid'])
    assert shown['reservation_class'] == name
    assert name in classes(pclient)


def test_a_class_placement_refuses_holds_back_no_later_lease(
        backend, clock, api, db, pclient, caplog):
    """The sweep takes the oldest lease first: one Placement keeps
    refusing is warned about and skipped, the later ones get theirs."""
    nodes(db, 1)
    uuids = []
    for day in (1, 2):
        start = clock.after(86400 * day)
        resp = api.post('/v1/leases', json={
            'project': 'p1', 'resource_class': 'bm', 'start': iso(start),
            'end': iso(start + datetime.timedelta(hours=1))})
        assert resp.status_code == 201, resp.json
        uuids.append(resp.json['uuid'])
    # A uuid whose class name Placement refuses (400: a dot is not
    # allowed in a class name), on the lease the sweep takes first.
    refused = 'refused.' + uuids[0][len('refused.'):]
    first = lease_obj.Lease.get(db, uuids[0]).id
    with db.writer() as conn:
        conn.execute(lease_obj.TABLE.update().where(
            lease_obj.TABLE.c.uuid == uuids[0]).values(uuid=refused))
    with caplog.at_level('WARNING', logger='ferrum.placement.leases'):
        backend.ctx.placement.create_classes()
    assert reservations.class_name(uuids[1]) in classes(pclient)
    assert reservations.class_name(refused) not in classes(pclient)
    assert not lease_obj.Lease.get(db, first).class_created
    assert lease_obj.Lease.get(db, uuids[1]).class_created
    assert ('Lease %s: Placement refused to create its class' % refused
            in caplog.text), caplog.text


def test_nodes_without_a_resource_class_need_no_claim(backend, clock, api, db,
                                                      pclient):
    made = nodes(db, 2, resource_class=None)
    resp = api.post('/v1/leases', json={
        'project': 'p1', 'candidate_nodes': [n.uuid for n in made],
        'end': iso(clock.after(3600))})
    assert resp.status_code == 201, resp.json
    engine.run(backend.ctx)
    lease = lease_obj.Lease.get(db, resp.json['uuid'])
    assert lease.status == 'active', lease.last_error
    assert resources(pclient, lease.uuid) == {}
    converged(db)
    for node in made:
        inv = pclient.get('/resource_providers/%s/inventories' % node.uuid)
        assert inv['inventories'] == {}


def test_an_allocation_right_after_the_start_gets_its_node(
        backend, clock, api, db, pclient):
    """The sync worker writes the reservation units a little after the
    lease is active; a claim in between writes the node's first."""
    nodes(db, 2)
    backend.placement.stop()  # nothing pushes behind the test's back
    resp = api.post('/v1/leases', json={
        'project': 'p1', 'resource_class': 'bm', 'count': 2,
        'end': iso(clock.after(3600))})
    lease_uuid = resp.json['uuid']
    engine.run(backend.ctx)
    assert lease_obj.Lease.get(db, lease_uuid).status == 'active'
    alloc = backend.manager.create_allocation(
        {'resource_class': 'bm', 'owner': 'p1'}, [])
    assert alloc.state == 'active', alloc.last_error
    assert resources(pclient, alloc.uuid) == {
        alloc.node_uuid: {RC: 1, reservations.class_name(lease_uuid): 1}}


def test_a_node_handed_over_to_the_project_s_next_lease(
        backend, clock, api, db, pclient, pconf):
    """The next lease of the same project starts on the node before the
    first one gave it back: its start leaves the node to the first
    lease's consumer, and the hand-over claims it for the next one."""
    pconf.set_override('cleaning_margin', 0, 'lease')
    (node,) = nodes(db, 1)

    def book():
        resp = api.post('/v1/leases', json={
            'project': 'p1', 'resource_class': 'bm',
            'candidate_nodes': [node.uuid],
            'end': iso(clock.after(3600))})
        assert resp.status_code == 201, resp.json
        return resp.json['uuid']

    first = book()
    engine.run(backend.ctx)
    assert api.delete('/v1/leases/%s' % first).status_code == 204
    second = book()
    engine.run(backend.ctx)
    engine.run(backend.ctx)
    assert lease_obj.Lease.get(db, first).status == 'ended'
    lease = lease_obj.Lease.get(db, second)
    assert lease.status == 'active', lease.last_error
    assert resources(pclient, first) == {}
    assert resources(pclient, second) == {node.uuid: {RC: 1}}
    from ferrum.objects import node as node_obj
    assert node_obj.Node.get(db, node.id).lessee == 'p1'


def test_a_lease_uuid_that_is_another_service_s_consumer(
        backend, clock, api, db, pclient):
    """The lease's consumer has the lease's uuid: a uuid that is another
    service's consumer fails the start, and that consumer is never
    written."""
    taken, free = nodes(db, 2)
    instance = foreign_claim(pclient, taken.uuid)
    before = consumer_body(pclient, instance)
    resp = api.post('/v1/leases', json={
        'uuid': instance.replace('-', '').upper(), 'project': 'p1',
        'resource_class': 'bm', 'candidate_nodes': [free.uuid],
        'end': iso(clock.after(3600))})
    assert resp.status_code == 201, resp.json
    assert resp.json['uuid'] == instance  # one spelling
    engine.run(backend.ctx)
    lease = lease_obj.Lease.get(db, instance)
    assert lease.status == 'error'
    assert 'already a consumer in Placement' in lease.last_error
    assert consumer_body(pclient, instance) == before
    # An allocation's uuid is refused at once.
    alloc = backend.manager.create_allocation({'resource_class': 'bm'}, [])
    resp = api.post('/v1/leases', json={
        'uuid': alloc.uuid, 'project': 'p2', 'resource_class': 'bm',
        'end': iso(clock.after(3600))})
    assert resp.status_code == 409
    assert "is an allocation's" in resp.json['error_message']
