# SPDX-License-Identifier: Apache-2.0
"""The audit of leases in the real Placement (in-process): their consumers
and classes, each drift found and healed, and a foreign consumer never
touched."""

import datetime
import uuid

import pytest

from ferrum.leases import engine
from ferrum.objects import lease as lease_obj
from ferrum.placement import audit
from ferrum.placement import consumer_audit
from ferrum.placement import lease_audit
from ferrum.placement import reservations
from ferrum.placement import status
from tests.functional.leases.sites import iso
from tests.functional.placement.deployment import command_config
from tests.functional.placement.scenario import RC
from tests.functional.placement.scenario import api_now
from tests.functional.placement.scenario import auditor
from tests.functional.placement.scenario import classes
from tests.functional.placement.scenario import consumer_body
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import foreign_claim
from tests.functional.placement.scenario import make_api
from tests.functional.placement.scenario import no_drift
from tests.functional.placement.scenario import nodes
from tests.functional.placement.scenario import resources


def lease_drift(conf, db, client):
    return [(item.kind, item.lease_uuid, item.node_uuid)
            for item in lease_audit.drift(auditor(conf, db, client, True))]


def all_drift(conf, db, client):
    no_drift(conf, db, client)
    assert lease_drift(conf, db, client) == []


def heal(conf, db, client):
    """``ferrum-placement audit --heal``'s order, through the modules."""
    from ferrum.cmd import placement as placement_cmd
    pusher = auditor(conf, db, client, True)
    return placement_cmd._heal(pusher, placement_cmd._drift(pusher))


def book(api, count, hours=1):
    end = api_now(api) + datetime.timedelta(hours=hours)
    resp = api.post('/v1/leases', json={
        'project': 'p1', 'resource_class': 'bm', 'count': count,
        'end': iso(end)})
    assert resp.status_code == 201, resp.json
    return resp.json['uuid']


@pytest.fixture
def running(backend, api, db, pclient, pconf):
    """An active lease of 2 of 3 nodes, synced: (lease, the free node)."""
    made = nodes(db, 3)
    lease_uuid = book(api, 2)
    engine.run(backend.ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'active', lease.last_error
    converged(db)
    (free,) = {n.uuid for n in made} - set(lease.nodes)
    return lease, free


def test_a_running_lease_has_no_drift_and_its_consumer_is_kept(
        running, backend, db, pclient, pconf):
    lease, _free = running
    # The consumer audit used to report the lease's consumer as an orphan
    # (its user is ferrum's, no allocation has its uuid), and --heal
    # released it: the lease's nodes unfenced.
    all_drift(pconf, db, pclient)
    heal(pconf, db, pclient)
    assert set(resources(pclient, lease.uuid)) == set(lease.nodes)
    # An allocation under the lease: the node is its consumer's now.
    alloc = backend.manager.create_allocation(
        {'resource_class': 'bm', 'owner': 'p1'}, [])
    assert alloc.state == 'active', alloc.last_error
    converged(db)
    all_drift(pconf, db, pclient)


def test_lease_consumer_missing_and_orphan_are_healed(running, db, pclient,
                                                      pconf):
    lease, free = running
    kept, lost = sorted(lease.nodes)
    # Behind ferrum's back: the lease's consumer drops a node it holds and
    # holds one the lease does not.
    current = consumer_body(pclient, lease.uuid)
    pclient.put('/allocations/%s' % lease.uuid, {
        'allocations': {kept: {'resources': {RC: 1}},
                        free: {'resources': {RC: 1}}},
        'consumer_generation': current['consumer_generation'],
        'project_id': 'p1', 'user_id': current['user_id']})
    assert sorted(lease_drift(pconf, db, pclient)) == sorted([
        (lease_audit.CONSUMER_MISSING, lease.uuid, lost),
        (lease_audit.CONSUMER_ORPHAN, lease.uuid, free)])
    # The allocations' audit leaves the lease's consumer alone.
    assert consumer_audit.drift(auditor(pconf, db, pclient)) == []
    assert heal(pconf, db, pclient)[lease.uuid] == 'claimed'
    assert resources(pclient, lease.uuid) == {n: {RC: 1}
                                              for n in lease.nodes}
    all_drift(pconf, db, pclient)


def test_missing_node_held_by_a_foreign_consumer_is_reported_not_taken(
        running, db, pclient, pconf):
    lease, _free = running
    kept, lost = sorted(lease.nodes)
    current = consumer_body(pclient, lease.uuid)
    pclient.put('/allocations/%s' % lease.uuid, {
        'allocations': {kept: {'resources': {RC: 1}}},
        'consumer_generation': current['consumer_generation'],
        'project_id': 'p1', 'user_id': current['user_id']})
    nova = foreign_claim(pclient, lost)
    assert lease_drift(pconf, db, pclient) == [
        (lease_audit.CONSUMER_MISSING, lease.uuid, lost)]
    outcome = heal(pconf, db, pclient)[lease.uuid]
    assert outcome == ('claimed; Placement refused nodes %s (another '
                       'consumer holds them, or they are reserved)' % lost)
    assert set(resources(pclient, nova)) == {lost}
    assert set(resources(pclient, lease.uuid)) == {kept}


def test_a_lease_consumer_of_another_user_is_never_touched(backend, api,
                                                           db, pclient,
                                                           pconf):
    (node,) = nodes(db, 1)
    lease_uuid = book(api, 1)  # pending until the engine runs
    foreign_claim(pclient, node.uuid, consumer=lease_uuid)
    assert lease_drift(pconf, db, pclient) == []
    heal(pconf, db, pclient)
    assert set(resources(pclient, lease_uuid)) == {node.uuid}


def test_classes_missing_and_orphan_are_healed(backend, api, db, pclient,
                                               pconf):
    nodes(db, 2)
    pending = book(api, 1)
    over = book(api, 1)
    backend.ctx.placement.create_classes()  # the engine's sweep
    api.delete('/v1/leases/%s' % over)  # pending: cancelled at once
    assert lease_obj.Lease.get(db, over).status == 'cancelled'
    # Deleted behind ferrum's back, after the sweep created it.
    pclient.delete('/resource_classes/%s' % reservations.class_name(pending))
    stranger = reservations.class_name(str(uuid.uuid4()))
    pclient.put('/resource_classes/%s' % stranger)
    found = {(item.kind, item.lease_uuid, item.repairable)
             for item in lease_audit.drift(auditor(pconf, db, pclient))}
    assert found == {
        (lease_audit.CLASS_MISSING, pending, True),
        (lease_audit.CLASS_ORPHAN, over, True),
        (lease_audit.CLASS_ORPHAN, reservations.lease_of(stranger), False)}
    assert status.summary(pconf, db)['lease_classes'] == 1  # over's
    outcomes = heal(pconf, db, pclient)
    assert outcomes[reservations.class_name(pending)] == 'created'
    assert outcomes[reservations.class_name(over)] == 'deleted'
    names = classes(pclient)
    assert reservations.class_name(pending) in names
    assert reservations.class_name(over) not in names
    assert stranger in names  # maybe Blazar's: left alone
    assert not lease_obj.Lease.get(db, over).placement_class
    assert status.summary(pconf, db)['lease_classes'] == 0
    pclient.delete('/resource_classes/%s' % stranger)
    all_drift(pconf, db, pclient)


def test_reservation_inventory_drift_is_the_node_audit_s(running, db,
                                                         pclient, pconf):
    lease, _free = running
    node = sorted(lease.nodes)[0]
    name = reservations.class_name(lease.uuid)
    # The reservation unit reserved behind ferrum's back.
    url = '/resource_providers/%s/inventories' % node
    inventories = pclient.get(url)
    inventories['inventories'][name]['reserved'] = 1
    pclient.put(url, inventories)
    (found,) = audit.drift(auditor(pconf, db, pclient, True), deep=True)
    assert (found.node_uuid, found.kind) == (node, 'inventory')
    assert name in found.detail
    heal(pconf, db, pclient)
    all_drift(pconf, db, pclient)


def test_audit_command_reports_and_heals_leases(running, db, pclient, pconf,
                                                tmp_path, capsys):
    from ferrum.cmd import placement as placement_cmd
    lease, _free = running
    # The bug this audit fixed: --heal released an active lease's consumer.
    pclient.delete('/allocations/%s' % lease.uuid)
    config = command_config(tmp_path, pconf)
    assert placement_cmd.main(['--config-file', config, 'audit']) == 3
    out = capsys.readouterr().out
    assert 'lease %s %s' % (lease.uuid, lease_audit.CONSUMER_MISSING) in out
    assert '1 lease with drift' in out
    assert placement_cmd.main(['--config-file', config, 'audit',
                               '--heal']) == 0
    out = capsys.readouterr().out
    assert '%s healed: claimed' % lease.uuid in out
    assert '0 leases with drift' in out
    assert set(resources(pclient, lease.uuid)) == set(lease.nodes)


def test_missing_allocation_consumer_under_a_lease_is_taken_from_it(
        running, backend, db, pclient, pconf):
    lease, _free = running
    alloc = backend.manager.create_allocation(
        {'resource_class': 'bm', 'owner': 'p1'}, [])
    assert alloc.state == 'active', alloc.last_error
    converged(db)
    # Behind ferrum's back (or an allocation made with the database
    # backend): the lease's consumer holds the allocation's node.
    held = consumer_body(pclient, lease.uuid)
    mine = consumer_body(pclient, alloc.uuid)
    body = {alloc.uuid: {
        'allocations': {}, 'project_id': 'p1', 'user_id': mine['user_id'],
        'consumer_generation': mine['consumer_generation']},
        lease.uuid: {
        'allocations': {n: {'resources': {RC: 1}} for n in lease.nodes},
        'project_id': 'p1', 'user_id': held['user_id'],
        'consumer_generation': held['consumer_generation']}}
    pclient.post('/allocations', body)
    assert [(d.kind, d.consumer) for d in consumer_audit.drift(
        auditor(pconf, db, pclient))] == [(consumer_audit.MISSING, alloc.uuid)]
    assert lease_drift(pconf, db, pclient) == [
        (lease_audit.CONSUMER_ORPHAN, lease.uuid, alloc.node_uuid)]
    outcomes = heal(pconf, db, pclient)
    assert outcomes[alloc.uuid] == 'claimed'
    assert resources(pclient, alloc.uuid) == {
        alloc.node_uuid: {RC: 1, reservations.class_name(lease.uuid): 1}}
    assert alloc.node_uuid not in resources(pclient, lease.uuid)
    all_drift(pconf, db, pclient)


def test_database_backend_lease_consumer_keeps_allocated_nodes(
        synced, db, pclient, pconf):
    nodes(db, 2)
    lease_uuid = book(make_api(pconf, db, synced.manager), 2)
    engine.run(synced.ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'active', lease.last_error
    # An allocation under the lease has no consumer with this backend:
    # the lease's consumer keeps its node.
    alloc = synced.manager.create_allocation(
        {'resource_class': 'bm', 'owner': 'p1'}, [])
    assert alloc.state == 'active', alloc.last_error
    converged(db)
    assert set(resources(pclient, lease_uuid)) == set(lease.nodes)
    assert audit.drift(auditor(pconf, db, pclient), deep=True) == []
    assert lease_audit.drift(auditor(pconf, db, pclient)) == []
    # Lost: the free node is missing and claimed again; the allocation's
    # is reserved (in use), fenced without the lease's consumer.
    pclient.delete('/allocations/%s' % lease_uuid)
    (free,) = set(lease.nodes) - {alloc.node_uuid}
    found = lease_audit.drift(auditor(pconf, db, pclient))
    assert [(d.kind, d.node_uuid) for d in found] == [
        (lease_audit.CONSUMER_MISSING, free)]
    assert lease_audit.heal_consumers(auditor(pconf, db, pclient), found) == {
        lease_uuid: 'claimed'}
    assert set(resources(pclient, lease_uuid)) == {free}
    assert lease_audit.drift(auditor(pconf, db, pclient)) == []
