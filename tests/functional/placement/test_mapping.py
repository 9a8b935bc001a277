# SPDX-License-Identifier: Apache-2.0
"""Every mapping rule, against the real Placement (in-process)."""

from ferrum.common import states
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj
from ferrum.placement import mapping
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import resume
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state
from tests.functional.placement.scenario import assert_no_drift
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import provider
from tests.functional.placement.scenario import reserved
from tests.polling import wait_for


def test_resource_class_names_are_nova_s():
    assert mapping.resource_class_name('baremetal') == 'CUSTOM_BAREMETAL'
    assert mapping.resource_class_name('bare-metal.Gold 1') == (
        'CUSTOM_BARE_METAL_GOLD_1')


def test_provider_is_the_node_with_one_custom_unit(synced, db, pclient):
    node = synced.manager.create_node({'driver': 'fake-hardware',
                                       'resource_class': 'bm.gold',
                                       'name': 'n1'})
    converged(db)
    body = pclient.get('/resource_providers/%s' % node.uuid)
    assert (body['uuid'], body['name']) == (node.uuid, node.uuid)
    inventories, traits = provider(pclient, node.uuid)
    assert inventories == {'CUSTOM_BM_GOLD': {
        'total': 1, 'reserved': 1, 'min_unit': 1, 'max_unit': 1,
        'step_size': 1, 'allocation_ratio': 1.0}}
    assert traits == {mapping.MANAGED}
    assert_no_drift(synced.conf, db, pclient)


def test_walk_sets_reserved_at_each_step(synced, db, pclient):
    """enroll -> available -> active -> cleaning -> available."""
    manager = synced.manager
    node = enroll(manager, fake_async=['erase_devices'])
    manager.update_node(node.uuid, {'resource_class': 'bm'})
    converged(db)
    assert reserved(pclient, node.uuid) == 1            # enroll
    node = to_state(manager, db, node, 'manageable')
    manager.do_provisioning_action(node.uuid, 'provide')
    settled(db, node.id, states.CLEANWAIT)
    converged(db)
    assert reserved(pclient, node.uuid) == 1            # cleaning
    resume(manager, node)
    settled(db, node.id, states.AVAILABLE)
    converged(db)
    assert reserved(pclient, node.uuid) == 0            # available
    assert_no_drift(synced.conf, db, pclient)
    manager.do_provisioning_action(node.uuid, 'deploy')
    settled(db, node.id, states.ACTIVE)
    converged(db)
    assert reserved(pclient, node.uuid) == 1            # active
    manager.do_provisioning_action(node.uuid, 'deleted')
    settled(db, node.id, states.CLEANWAIT)
    converged(db)
    assert reserved(pclient, node.uuid) == 1            # cleaning again
    resume(manager, node)
    settled(db, node.id, states.AVAILABLE)
    converged(db)
    assert reserved(pclient, node.uuid) == 0            # claimable again
    assert_no_drift(synced.conf, db, pclient)


def _available(synced, db, **values):
    manager = synced.manager
    node = manager.create_node(dict({'driver': 'fake-hardware',
                                     'resource_class': 'bm'}, **values))
    node = to_state(manager, db, node, 'available')
    converged(db)
    assert reserved(synced.placement.client, node.uuid) == 0
    return node


def test_each_reason_to_reserve(synced, db, pclient):
    node = _available(synced, db)
    for changes in ({'maintenance': True}, {'retired': True},
                    {'power_state': None}, {'power_state': states.ERROR},
                    {'instance_uuid': '7e1b1b4c-8d2a-4c55-9c1e-2f1c3e1d9a01'}):
        fresh = node_obj.Node.get(db, node.id)
        before = {key: getattr(fresh, key) for key in changes}
        for key, value in changes.items():
            setattr(fresh, key, value)
        fresh.save()
        converged(db)
        assert reserved(pclient, node.uuid) == 1, changes
        for key, value in before.items():
            setattr(fresh, key, value)
        fresh.save()
        converged(db)
        assert reserved(pclient, node.uuid) == 0, changes
    assert_no_drift(synced.conf, db, pclient)


def test_allocation_reserves_and_release_frees(synced, db, pclient):
    node = _available(synced, db)
    allocation = synced.manager.create_allocation(
        {'resource_class': 'bm'}, [])
    wait_for(lambda: node_obj.Node.get(db, node.id).allocation_id,
             what='the allocation to claim the node')
    converged(db)
    assert reserved(pclient, node.uuid) == 1
    synced.manager.destroy_allocation(allocation.uuid)
    converged(db)
    assert node_obj.Node.get(db, node.id).allocation_id is None
    assert reserved(pclient, node.uuid) == 0
    assert_no_drift(synced.conf, db, pclient)


def test_no_resource_class_means_no_inventory_and_moves(synced, db, pclient):
    manager = synced.manager
    node = manager.create_node({'driver': 'fake-hardware'})
    converged(db)
    inventories, traits = provider(pclient, node.uuid)
    assert inventories == {} and traits == {mapping.MANAGED}
    manager.update_node(node.uuid, {'resource_class': 'small'})
    converged(db)
    assert set(provider(pclient, node.uuid)[0]) == {'CUSTOM_SMALL'}
    manager.update_node(node.uuid, {'resource_class': 'large'})
    converged(db)
    assert set(provider(pclient, node.uuid)[0]) == {'CUSTOM_LARGE'}
    assert_no_drift(synced.conf, db, pclient)


def test_traits_pushed_and_foreign_traits_kept(synced, db, pclient):
    manager = synced.manager
    node = manager.create_node({'driver': 'fake-hardware',
                                'resource_class': 'bm'})
    trait_obj.set_for_node(db, node.id, ['CUSTOM_GPU', 'HW_CPU_X86_AVX2'])
    converged(db)
    _inv, traits = provider(pclient, node.uuid)
    assert traits == {mapping.MANAGED, 'CUSTOM_GPU', 'HW_CPU_X86_AVX2'}
    # Another service tags the provider.
    generation = pclient.get('/resource_providers/%s' % node.uuid)[
        'generation']
    pclient.put('/traits/CUSTOM_RACK_7')
    pclient.put('/resource_providers/%s/traits' % node.uuid, {
        'traits': sorted(traits | {'CUSTOM_RACK_7'}),
        'resource_provider_generation': generation})
    trait_obj.remove(db, node.id, 'CUSTOM_GPU')
    trait_obj.add(db, node.id, 'CUSTOM_FAST')
    converged(db)
    _inv, traits = provider(pclient, node.uuid)
    assert traits == {mapping.MANAGED, 'CUSTOM_FAST', 'HW_CPU_X86_AVX2',
                      'CUSTOM_RACK_7'}
    assert_no_drift(synced.conf, db, pclient)


def test_with_the_placement_backend_a_held_node_is_reserved_once_in_use():
    """Its consumer holds the only unit while it is available
    (doc/placement.md); once in use (deploying, active, cleaning...) it is
    reserved as with the database backend, so a node in use whose
    consumer is missing is still fenced; a node nobody holds keeps every
    other reason to be reserved."""
    base = {'provision_state': 'available', 'maintenance': False,
            'power_state': 'power off', 'instance_uuid': None,
            'allocation_id': None, 'retired': False}
    held = dict(base, allocation_id=7, instance_uuid='x')
    for change in ({}, {'maintenance': True}, {'power_state': None}):
        assert mapping.reserved(dict(held, **change), claims=True) is False
        assert mapping.reserved(dict(held, **change)) is True
    for state in ('deploying', 'wait call-back', 'active', 'deleting',
                  'cleaning', 'clean wait', 'deploy failed'):
        changed = dict(held, provision_state=state)
        assert mapping.reserved(changed, claims=True) is True
        assert mapping.reserved(changed) is True
    for change in ({'provision_state': 'cleaning'}, {'maintenance': True},
                   {'instance_uuid': 'nova-instance'}, {'retired': True},
                   {'power_state': None}):
        assert mapping.reserved(dict(base, **change), claims=True) is True
    assert mapping.reserved(base, claims=True) is False
