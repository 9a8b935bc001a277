# SPDX-License-Identifier: Apache-2.0
"""The placement allocation backend and consumers ferrum did not create:
a user-chosen allocation uuid that is another service's consumer, and
nodes allocated before a switch from the database backend."""

import dataclasses

import pytest

from ferrum.allocation import placement_backend
from ferrum.allocation import takeover
from ferrum.common import exception
from ferrum.conductor import service
from ferrum.objects import allocation as allocation_obj
from ferrum.placement import audit
from ferrum.placement import claims
from ferrum.placement import consumer_audit
from ferrum.placement import errors
from ferrum.placement import releases
from ferrum.placement import sync
from ferrum.placement import worker
from tests.functional.conductor.flows import settled
from tests.functional.placement.scenario import auditor
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import dead_conductor
from tests.functional.placement.scenario import foreign_claim
from tests.functional.placement.scenario import holders
from tests.functional.placement.scenario import no_drift
from tests.functional.placement.scenario import nodes
from tests.functional.placement.scenario import reserved


@pytest.fixture(params=[None, 0], ids=['default-retries', 'no-retries'])
def retries(request, pconf):
    """``[placement] max_conflict_retries``: finding that a uuid presumed
    new is taken costs its own re-read, whatever the budget."""
    if request.param is not None:
        pconf.set_override('max_conflict_retries', request.param,
                           group='placement')
    return request.param


def test_a_uuid_that_is_another_service_s_consumer_is_refused(
        retries, backend, db, pclient, pconf):
    """Nova holds node N as consumer X; an allocation created with uuid X
    must neither become active on N nor, when deleted, drop nova's
    claim."""
    taken, free = nodes(db, 2)
    nova = foreign_claim(pclient, taken.uuid)
    allocation = backend.manager.create_allocation(
        {'resource_class': 'bm', 'uuid': nova}, [])
    assert allocation.state == 'error'
    assert allocation.node_id is None
    assert 'already a consumer in Placement' in allocation.last_error
    assert 'another uuid' in allocation.last_error
    assert holders(pclient, taken.uuid) == {nova}
    assert holders(pclient, free.uuid) == set()
    backend.manager.destroy_allocation(allocation.uuid)
    assert holders(pclient, taken.uuid) == {nova}
    assert releases.backlog(db) == 0
    # Nor does a release queued later (an outage's) remove it.
    releases.record(db, [nova])
    assert backend.manager.ctx.placement.release_now([nova])
    assert releases.backlog(db) == 0
    assert holders(pclient, taken.uuid) == {nova}


def test_a_backfill_with_another_service_s_instance_uuid_is_refused(
        backend, db, pclient, pconf):
    (node,) = nodes(db, 1, provision_state='active')
    nova = foreign_claim_active(pclient, node.uuid)
    with pytest.raises(exception.AllocationFailed) as caught:
        backend.manager.backfill_allocation(node.uuid, {'uuid': nova}, [])
    assert 'already a consumer in Placement' in str(caught.value)
    assert allocation_obj.Allocation.list(db) == []
    assert holders(pclient, node.uuid) == {nova}


def foreign_claim_active(client, node_uuid):
    """Nova's claim of a node it deployed (made while it was free)."""
    url = '/resource_providers/%s/inventories' % node_uuid
    inventories = client.get(url)
    inventories['inventories']['CUSTOM_BM']['reserved'] = 0
    client.put(url, inventories)
    nova = foreign_claim(client, node_uuid)
    inventories = client.get(url)
    inventories['inventories']['CUSTOM_BM']['reserved'] = 1
    client.put(url, inventories)
    return nova


def test_release_leaves_another_user_s_consumer(backend, db, pclient,
                                                pconf):
    (node,) = nodes(db, 1)
    nova = foreign_claim(pclient, node.uuid)
    assert not claims.release(sync.Pusher(pconf, db, pclient), nova,
                                 lease_aware=False)
    assert holders(pclient, node.uuid) == {nova}
    orphan = audit.Drift(node.uuid, consumer_audit.ORPHAN, 'forced',
                         consumer=nova)
    assert consumer_audit.heal(auditor(pconf, db, pclient), [orphan]) == {
        nova: 'not ours'}
    assert holders(pclient, node.uuid) == {nova}


def test_a_switch_from_the_database_backend_keeps_nodes_in_use_fenced(
        pconf, db, pclient):
    """Allocations made with backend = database have no consumer. After
    the switch, a node in use stays reserved (nova cannot claim it) until
    ``ferrum-placement audit --heal`` creates its consumer."""
    first = service.ConductorService(pconf, db=db)
    first.start(start_periodics=False)
    try:
        node, _spare = nodes(db, 2)
        allocation = first.manager.create_allocation(
            {'resource_class': 'bm', 'candidate_nodes': [node.uuid]}, [])
        assert allocation.state == 'active'
        first.manager.do_provisioning_action(node.uuid, 'deploy')
        settled(db, node.id, 'active')
        converged(db)
    finally:
        first.stop()
    assert reserved(pclient, node.uuid) == 1
    pconf.set_override('backend', 'placement', group='allocation')
    second = service.ConductorService(pconf, db=db)
    second.start(start_periodics=False)
    try:
        # The switch changes nothing the reconcile would push.
        assert audit.drift(auditor(pconf, db, pclient, True), deep=True) == []
        second.ctx.placement.pusher.push(node.uuid, verify=True)
        assert reserved(pclient, node.uuid) == 1
        with pytest.raises(errors.PlacementConflict):
            foreign_claim(pclient, node.uuid)
        found = consumer_audit.drift(auditor(pconf, db, pclient))
        assert [(d.kind, d.consumer) for d in found] == [
            (consumer_audit.MISSING, allocation.uuid)]
        assert consumer_audit.heal(auditor(pconf, db, pclient), found) == {
            allocation.uuid: 'claimed'}
        assert holders(pclient, node.uuid) == {allocation.uuid}
        assert reserved(pclient, node.uuid) == 1
        no_drift(pconf, db, pclient)
        second.manager.do_provisioning_action(node.uuid, 'deleted')
        settled(db, node.id, 'available')
        assert holders(pclient, node.uuid) == set()
    finally:
        second.stop()


def test_a_backfill_that_fails_unexpectedly_leaves_the_node_fenced(
        backend, db, pclient, pconf):
    """Any failure of the claim, not only a refusal, undoes the
    allocation, and the provider of the active node is reserved again."""
    (node,) = nodes(db, 1, provision_state='active')

    def broken(method, url, body):
        if method in ('PUT', 'POST') and url.startswith('/allocations'):
            raise RuntimeError('claim exploded')

    backend.placement.client.observers.append(broken)
    with pytest.raises(exception.AllocationFailed) as caught:
        backend.manager.backfill_allocation(node.uuid, {}, [])
    assert 'failed unexpectedly: claim exploded' in str(caught.value)
    assert allocation_obj.Allocation.list(db) == []
    assert reserved(pclient, node.uuid) == 1
    assert holders(pclient, node.uuid) == set()
    converged(db)
    no_drift(pconf, db, pclient)


def test_a_stale_conductor_leaves_the_new_owner_s_claim(backend, db,
                                                       pclient, pconf):
    """A conductor declared dead while its claim was in flight: another
    conductor took the row over and claimed afresh before the stale one's
    database write was refused; the stale one must not remove the new
    owner's consumer (same uuid)."""
    first, second = nodes(db, 2)
    stale = dead_conductor(db, 'stale-host')
    row = allocation_obj.Allocation.create(db, {
        'resource_class': 'bm', 'conductor_affinity': stale.id,
        'candidate_nodes': [second.uuid]})
    stale_ctx = dataclasses.replace(backend.ctx, conductor_id=stale.id)

    def reserve_after_take_over():
        # While the stale conductor stalled, the live one took over.
        takeover.AllocationTakeover().check_orphaned_allocations(
            backend.ctx)
        raise exception.AllocationGone(allocation=row.uuid)

    with pytest.raises(exception.AllocationGone):
        placement_backend.PlacementBackend().claim(
            stale_ctx, row, first.uuid, reserve_after_take_over)
    row = allocation_obj.Allocation.get(db, row.id)
    assert row.state == 'active', row.last_error
    assert row.node_uuid == second.uuid
    assert holders(pclient, second.uuid) == {row.uuid}
    assert holders(pclient, first.uuid) == set()
    no_drift(pconf, db, pclient)


def test_the_reconcile_claims_a_switched_allocation_of_an_available_node(
        pconf, db, pclient):
    """An allocation made with backend = database on a node still
    ``available``: not reserved under the placement backend, so the
    periodic reconcile claims its missing consumer, and a node another
    service took in the meantime is left to it (logged)."""
    first = service.ConductorService(pconf, db=db)
    first.start(start_periodics=False)
    try:
        held, taken = nodes(db, 2)
        # The allocations' pushes stay queued for the second conductor:
        # had they gone out, the nodes would be reserved until the
        # reconcile (how fast the sync thread was decided it before).
        first.placement.stop()
        allocations = [first.manager.create_allocation(
            {'resource_class': 'bm', 'candidate_nodes': [node.uuid]}, [])
            for node in (held, taken)]
        assert [a.state for a in allocations] == ['active', 'active']
    finally:
        first.stop()
    pconf.set_override('backend', 'placement', group='allocation')
    second = service.ConductorService(pconf, db=db)
    second.start(start_periodics=False)
    try:
        converged(db)
        assert reserved(pclient, held.uuid) == 0
        nova = foreign_claim(pclient, taken.uuid)  # the window
        worker.Reconcile(second.placement).reconcile_placement(second.ctx)
        assert holders(pclient, held.uuid) == {allocations[0].uuid}
        assert holders(pclient, taken.uuid) == {nova}
        found = consumer_audit.drift(auditor(pconf, db, pclient))
        assert [(d.kind, d.consumer) for d in found] == [
            (consumer_audit.MISSING, allocations[1].uuid),
            (consumer_audit.DOUBLE, nova)]
    finally:
        second.stop()
