# SPDX-License-Identifier: Apache-2.0
"""The placement allocation backend against the real Placement, in-process:
every allocation a consumer, every path keeping both sides equal."""

import uuid

import pytest

from ferrum.allocation import takeover
from ferrum.common import exception
from ferrum.conductor import service
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj
from ferrum.placement import consumer_audit
from ferrum.placement import errors
from ferrum.placement import releases
from tests.functional.conductor.flows import settled
from tests.functional.placement.deployment import command_config
from tests.functional.placement.scenario import RC
from tests.functional.placement.scenario import auditor
from tests.functional.placement.scenario import change_inventory
from tests.functional.placement.scenario import consumer_body
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import dead_conductor
from tests.functional.placement.scenario import finished
from tests.functional.placement.scenario import foreign_claim
from tests.functional.placement.scenario import holders
from tests.functional.placement.scenario import no_drift
from tests.functional.placement.scenario import nodes
from tests.functional.placement.scenario import reserved
from tests.functional.placement.scenario import stray_claim
from tests.polling import wait_for


def test_placement_backend_needs_placement(conf, db):
    conf.set_override('backend', 'placement', group='allocation')
    with pytest.raises(errors.ConfigInvalid) as caught:
        service.ConductorService(conf, db=db).start(start_periodics=False)
    assert '[allocation] backend = placement' in str(caught.value)
    assert '[placement]' in str(caught.value)


def test_an_allocation_is_a_consumer_of_its_node(backend, db, pclient,
                                                 pconf):
    nodes(db, 1, owner='project-a')
    nodes(db, 1)
    allocation = backend.manager.create_allocation(
        {'resource_class': 'bm', 'owner': 'project-a'}, [])
    assert allocation.state == 'active', allocation.last_error
    held = consumer_body(pclient, allocation.uuid)
    assert {k: v['resources'] for k, v in held['allocations'].items()} == {
        allocation.node_uuid: {RC: 1}}
    assert (held['project_id'], held['user_id']) == ('project-a', 'ferrum')
    without_owner = backend.manager.create_allocation(
        {'resource_class': 'bm'}, [])
    assert without_owner.state == 'active', without_owner.last_error
    assert consumer_body(pclient, without_owner.uuid)['project_id'] == 'ferrum'
    # The claim holds the unit: no inventory write to reserve it.
    converged(db)
    assert reserved(pclient, allocation.node_uuid) == 0
    no_drift(pconf, db, pclient)


def test_a_node_placement_refuses_is_skipped_and_counted(backend, db,
                                                         pclient, pconf):
    taken, free = nodes(db, 2)
    nova = foreign_claim(pclient, taken.uuid)
    only_taken = backend.manager.create_allocation(
        {'resource_class': 'bm', 'candidate_nodes': [taken.uuid]}, [])
    assert only_taken.state == 'error'
    assert 'Placement refused 1 node' in only_taken.last_error
    either = backend.manager.create_allocation(
        {'resource_class': 'bm', 'candidate_nodes': [taken.uuid, free.uuid]},
        [])
    assert either.state == 'active', either.last_error
    assert either.node_uuid == free.uuid
    assert holders(pclient, taken.uuid) == {nova}
    assert holders(pclient, free.uuid) == {either.uuid}
    # The failed allocation left no consumer behind.
    assert consumer_body(pclient, only_taken.uuid)['allocations'] == {}


def test_delete_releases_the_consumer_at_once(backend, db, pclient, pconf):
    (node,) = nodes(db, 1)
    allocation = backend.manager.create_allocation(
        {'resource_class': 'bm'}, [])
    backend.manager.destroy_allocation(allocation.uuid)
    assert holders(pclient, node.uuid) == set()
    assert releases.backlog(db) == 0
    converged(db)
    assert reserved(pclient, node.uuid) == 0
    no_drift(pconf, db, pclient)


def test_tear_down_reserves_the_node_before_releasing_it(backend, db,
                                                         pclient, pconf):
    (node,) = nodes(db, 1)
    allocation = backend.manager.create_allocation(
        {'resource_class': 'bm'}, [])
    manager = backend.manager
    manager.do_provisioning_action(node.uuid, 'deploy')
    settled(db, node.id, 'active')
    converged(db)
    # Deployed and held: reserved too, as any node in use (one inventory
    # PUT per deployment), so that it stays fenced without its consumer.
    assert reserved(pclient, node.uuid) == 1
    assert holders(pclient, node.uuid) == {allocation.uuid}
    manager.do_provisioning_action(node.uuid, 'deleted')
    settled(db, node.id, 'available')
    converged(db)
    assert holders(pclient, node.uuid) == set()
    with pytest.raises(exception.AllocationNotFound):
        allocation_obj.Allocation.get(db, allocation.uuid)
    assert reserved(pclient, node.uuid) == 0
    no_drift(pconf, db, pclient)


def test_release_pushes_the_reserve_first(backend, db, pclient, pconf):
    """A node freed while not available (cleaning, maintenance) is
    reserved in Placement before its unit is free: nova's bug 1974070."""
    (node,) = nodes(db, 1)
    allocation = backend.manager.create_allocation(
        {'resource_class': 'bm'}, [])
    backend.manager.set_maintenance(node.uuid, True, 'broken')
    converged(db)
    assert reserved(pclient, node.uuid) == 0  # held: the consumer fences
    backend.manager.destroy_allocation(allocation.uuid)
    # Synchronously, before the answer: reserved, then released.
    assert reserved(pclient, node.uuid) == 1
    assert holders(pclient, node.uuid) == set()
    no_drift(pconf, db, pclient)


def test_node_deletion_releases_its_consumer(backend, db, pclient, pconf):
    (node,) = nodes(db, 1)
    allocation = backend.manager.create_allocation(
        {'resource_class': 'bm'}, [])
    backend.manager.set_maintenance(node.uuid, True, 'retiring')
    backend.manager.destroy_node(node.uuid)
    assert consumer_body(pclient, allocation.uuid)['allocations'] == {}
    converged(db)
    assert pclient.get('/resource_providers/%s' % node.uuid,
                       not_found_ok=True) is None
    no_drift(pconf, db, pclient)


def test_a_deleted_node_s_provider_goes_with_its_consumers(backend, db,
                                                            pclient, pconf):
    """Whichever comes first, the consumer's release or the provider's
    deletion, the provider goes (as in nova's cascade delete)."""
    (node,) = nodes(db, 1)
    stray = str(uuid.uuid4())
    stray_claim(pconf, db, pclient, stray, node.uuid)
    backend.manager.destroy_node(node.uuid)
    converged(db)
    assert pclient.get('/resource_providers/%s' % node.uuid,
                       not_found_ok=True) is None
    assert consumer_body(pclient, stray)['allocations'] == {}
    no_drift(pconf, db, pclient)


def test_backfill_creates_the_consumer_of_an_active_node(backend, db,
                                                         pclient, pconf):
    (node,) = nodes(db, 1, provision_state='active')
    assert reserved(pclient, node.uuid) == 1
    allocation = backend.manager.backfill_allocation(node.uuid, {}, [])
    assert allocation.state == 'active'
    assert node_obj.Node.get(db, node.id).instance_uuid == allocation.uuid
    assert holders(pclient, node.uuid) == {allocation.uuid}
    # Unreserved for the claim only: reserved again at once (in use).
    assert reserved(pclient, node.uuid) == 1
    converged(db)
    assert reserved(pclient, node.uuid) == 1
    no_drift(pconf, db, pclient)
    backend.manager.set_maintenance(node.uuid, True, 'done')
    backend.manager.destroy_allocation(allocation.uuid)
    assert holders(pclient, node.uuid) == set()
    assert reserved(pclient, node.uuid) == 1
    no_drift(pconf, db, pclient)


def test_a_refused_backfill_leaves_nothing(backend, db, pclient, pconf):
    (node,) = nodes(db, 1, provision_state='active')
    # Another service got the unit while the node was unreserved.
    change_inventory(pclient, node.uuid, reserved=0)
    nova = foreign_claim(pclient, node.uuid)
    with pytest.raises(exception.AllocationFailed) as caught:
        backend.manager.backfill_allocation(node.uuid, {}, [])
    assert 'another consumer holds it' in str(caught.value)
    assert allocation_obj.Allocation.list(db) == []
    assert node_obj.Node.get(db, node.id).allocation_id is None
    assert holders(pclient, node.uuid) == {nova}


def test_take_over_removes_a_dead_conductor_s_claim(backend, db, pclient,
                                                    pconf):
    """A conductor killed between its Placement claim and its database
    write leaves a consumer and an ``allocating`` row: the conductor that
    takes the row over removes the claim and allocates afresh."""
    first, second = nodes(db, 2)
    dead = dead_conductor(db, 'dead-host')
    row = allocation_obj.Allocation.create(db, {
        'resource_class': 'bm', 'conductor_affinity': dead.id,
        'candidate_nodes': [second.uuid]})
    stray_claim(pconf, db, pclient, row.uuid, first.uuid)
    takeover.AllocationTakeover().check_orphaned_allocations(backend.ctx)
    row = allocation_obj.Allocation.get(db, row.id)
    assert row.state == 'active', row.last_error
    assert row.node_uuid == second.uuid
    assert holders(pclient, first.uuid) == set()
    assert holders(pclient, second.uuid) == {row.uuid}
    no_drift(pconf, db, pclient)


def test_audit_reports_and_heals_consumer_orphans(backend, db, pclient,
                                                  pconf):
    lost, orphaned, foreign = nodes(db, 3)
    allocation = backend.manager.create_allocation(
        {'resource_class': 'bm', 'candidate_nodes': [lost.uuid]}, [])
    # An operator's mistake:
    pclient.delete('/allocations/%s' % allocation.uuid)
    stray = str(uuid.uuid4())
    stray_claim(pconf, db, pclient, stray, orphaned.uuid)
    nova = foreign_claim(pclient, foreign.uuid)
    found = consumer_audit.drift(auditor(pconf, db, pclient))
    assert sorted((d.kind, d.node_uuid, d.consumer) for d in found) == sorted(
        [(consumer_audit.MISSING, lost.uuid, allocation.uuid),
         (consumer_audit.ORPHAN, orphaned.uuid, stray)])
    outcomes = consumer_audit.heal(auditor(pconf, db, pclient), found)
    assert outcomes == {allocation.uuid: 'claimed', stray: 'released'}
    assert consumer_audit.drift(auditor(pconf, db, pclient)) == []
    assert holders(pclient, foreign.uuid) == {nova}


def test_audit_reports_a_node_held_by_both(backend, db, pclient, pconf):
    (node,) = nodes(db, 1)
    allocation = backend.manager.create_allocation(
        {'resource_class': 'bm'}, [])
    # Only possible behind ferrum's back (reserved lifted by hand).
    change_inventory(pclient, node.uuid, total=2)
    nova = foreign_claim(pclient, node.uuid)
    (found,) = consumer_audit.drift(auditor(pconf, db, pclient))
    assert (found.kind, found.consumer, found.repairable) == (
        consumer_audit.DOUBLE, nova, False)
    assert allocation.uuid in found.detail


def test_queued_releases_are_drained_by_the_sync_worker(backend, db,
                                                        pclient, pconf):
    (node,) = nodes(db, 1)
    stray = str(uuid.uuid4())
    stray_claim(pconf, db, pclient, stray, node.uuid)
    releases.record(db, [stray])
    wait_for(lambda: releases.backlog(db) == 0,
             what='the release queue to drain')
    assert holders(pclient, node.uuid) == set()


@pytest.mark.parametrize('state', ['available', 'maintenance'])
def test_postgresql_one_statement_release_queues_the_consumer(
        pconf, pg_db, pclient, state):
    """The release that frees the node inside a CTE (the fast path) and
    the general path both queue and release the consumer."""
    pconf.set_override('backend', 'placement', group='allocation')
    svc = service.ConductorService(pconf, db=pg_db)
    svc.start(start_periodics=False)
    try:
        (node,) = nodes(pg_db, 1)
        allocation = svc.manager.create_allocation(
            {'resource_class': 'bm'}, [])
        assert allocation.state == 'active', allocation.last_error
        if state == 'maintenance':
            svc.manager.set_maintenance(node.uuid, True, 'broken')
        svc.manager.destroy_allocation(allocation.uuid)
        assert holders(pclient, node.uuid) == set()
        assert releases.backlog(pg_db) == 0
        converged(pg_db)
        assert reserved(pclient, node.uuid) == int(state == 'maintenance')
        no_drift(pconf, pg_db, pclient)
    finally:
        svc.stop()


def test_audit_command_checks_and_heals_consumers(backend, db, pclient,
                                                  pconf, tmp_path, capsys):
    from ferrum.cmd import placement as placement_cmd
    (node,) = nodes(db, 1)
    stray = str(uuid.uuid4())
    stray_claim(pconf, db, pclient, stray, node.uuid)
    config = command_config(tmp_path, pconf)
    assert placement_cmd.main(['--config-file', config, 'audit']) == 3
    assert '%s consumer-orphan' % node.uuid in capsys.readouterr().out
    assert placement_cmd.main(['--config-file', config, 'audit',
                               '--heal']) == 0
    out = capsys.readouterr().out
    assert '%s healed: released' % stray in out
    assert '0 nodes with drift' in out
    assert holders(pclient, node.uuid) == set()


def test_a_candidate_missing_in_placement_does_not_spoil_the_next(
        backend, db, pclient, pconf):
    """Placement creates the consumer before it looks the providers up,
    and keeps it (empty, generation 0) when the write fails with a 400:
    the next candidate's claim must still go through."""
    *gone, free = nodes(db, 6)
    for node in gone:
        pclient.delete('/resource_providers/%s' % node.uuid)
    allocation = finished(db, backend.manager.create_allocation(
        {'resource_class': 'bm',
         'candidate_nodes': [node.uuid for node in [*gone, free]]}, []))
    assert allocation.state == 'active', allocation.last_error
    assert allocation.node_uuid == free.uuid
    assert 'Placement refused' not in (allocation.last_error or '')
    assert holders(pclient, free.uuid) == {allocation.uuid}
