# SPDX-License-Identifier: Apache-2.0
"""What the objects layer queues for Placement, in the writing transaction:
a push for a write of a column the provider depends on, a release for a
deleted allocation, and nothing without ``[placement]`` (the
configuration is read at each write)."""

import sqlalchemy as sa

from ferrum.conductor import recovery
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj
from ferrum.objects import placement_queue
from ferrum.objects import trait as trait_obj
from ferrum.objects.allocation import releases as allocation_releases


def _node(db, **values):
    return node_obj.Node.create(db, dict({
        'driver': 'fake-hardware', 'provision_state': 'available',
        'power_state': 'power off'}, **values))


def _pushes(db):
    with db.reader() as conn:
        return sorted(conn.execute(sa.select(
            placement_queue.OUTBOX.c.node_uuid)).scalars())


def _releases(db):
    with db.reader() as conn:
        return sorted(conn.execute(sa.select(
            placement_queue.RELEASES.c.consumer_uuid,
            placement_queue.RELEASES.c.node_uuid)).all())


def _placement_on(conf, backend='database'):
    conf.set_override('auth_type', 'admin_token', group='placement')
    conf.set_override('backend', backend, group='allocation')


def test_nothing_is_queued_without_placement(db):
    node = _node(db)
    node.provision_state = 'manageable'
    node.save()
    node.destroy()
    assert _pushes(db) == [] and _releases(db) == []


def test_a_write_the_provider_depends_on_is_queued_others_are_not(conf, db):
    node = _node(db)
    _placement_on(conf)
    locked = node_obj.Node.reserve(db, 'host-1', node.uuid)
    locked.description = 'not in the provider'
    locked.save()
    assert _pushes(db) == []
    node_obj.Node.release(db, 'host-1', node.id, {'maintenance': True})
    trait_obj.add(db, node.id, 'CUSTOM_GOLD')
    assert _pushes(db) == [node.uuid, node.uuid]
    # A write refused by its fence queues nothing: the node is not held.
    assert not node_obj.Node.write_if_held(db, 'host-1', node.id,
                                           {'maintenance': False})
    assert _pushes(db) == [node.uuid, node.uuid]


def test_a_conductors_recovery_queues_the_nodes_it_fails(conf, db):
    _placement_on(conf)
    node = _node(db, provision_state='deploying')
    node_obj.Node.reserve(db, 'dead-host', node.uuid)
    assert _pushes(db) == [node.uuid]  # its creation
    assert recovery.fail_and_release(db, 'dead-host', 'died') == 1
    assert node_obj.Node.get(db, node.id).provision_state == 'deploy failed'
    assert _pushes(db) == [node.uuid, node.uuid]


def test_deleted_allocations_queue_their_consumers(conf, db):
    _placement_on(conf, backend='placement')
    held = _node(db)
    with_node = allocation_obj.Allocation.create(db, {})
    node = node_obj.Node.reserve(db, 'host-1', held.uuid)
    node_obj.Node.release(db, 'host-1', node.id)
    allocation_obj.Allocation.create_active(db, {}, [], node)
    active = allocation_obj.Allocation.get_by_node(db, held.id)
    allocation_releases.delete(db, with_node.id)
    released = allocation_releases.destroy_releasing_node(
        db, active.uuid, lambda node: None)
    assert released.node_uuid == held.uuid
    assert _releases(db) == sorted([(with_node.uuid, None),
                                    (active.uuid, held.uuid)])
