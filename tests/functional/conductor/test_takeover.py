# SPDX-License-Identifier: Apache-2.0
"""Two conductors on one database: who handles which node, and take-over.

The periodic methods are called directly; the hash ring decides which of
the two conductors each node belongs to, as it does for the API.
"""

import pytest

from ferrum import conf as ferrum_conf
from ferrum.common import hash_ring
from ferrum.common import states
from ferrum.conductor import ownership
from ferrum.conductor import service
from ferrum.conductor import takeover
from ferrum.drivers.fake import interfaces as fake
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state

NODES = 12


@pytest.fixture
def second(conf, db, tmp_path):
    """A second started conductor, 'conductor-b', on the same database."""
    other = ferrum_conf.new_conf()
    other.set_override('state_path', str(tmp_path))
    other.set_override('host', 'conductor-b')
    svc = service.ConductorService(other, db=db)
    svc.start(start_periodics=False)
    yield svc
    svc.stop()


def _owner(db, node):
    return hash_ring.conductor_for(conductor_obj.alive_drivers(db, 60),
                                   node.driver, node.conductor_group,
                                   node.uuid)


def _active_nodes(conductor, db, count=NODES):
    return [to_state(conductor.manager, db, enroll(conductor.manager),
                     'active') for _ in range(count)]


def _split(db, nodes):
    """Nodes by the host the ring gives them to."""
    owners: dict[str, list[node_obj.Node]] = {}
    for node in nodes:
        owners.setdefault(_owner(db, node), []).append(node)
    return owners


def test_deploy_and_adopt_record_the_conductor(conductor, db):
    node = _active_nodes(conductor, db, 1)[0]
    assert node.conductor_affinity == conductor.ctx.conductor_id
    adopted = to_state(conductor.manager, db, enroll(conductor.manager),
                       'manageable')
    conductor.manager.do_provisioning_action(adopted.uuid, 'adopt')
    adopted = settled(db, adopted.id, states.ACTIVE)
    assert adopted.conductor_affinity == conductor.ctx.conductor_id


def test_joining_conductor_takes_over_its_share_only(conductor, second, db):
    nodes = _active_nodes(conductor, db)
    owners = _split(db, nodes)
    assert set(owners) == {conductor.ctx.host, 'conductor-b'}, owners
    takeover.NodeTakeover().sync_local_state(conductor.ctx)  # nothing moved
    takeover.NodeTakeover().sync_local_state(second.ctx)
    for host, owned in owners.items():
        for node in owned:
            fresh = node_obj.Node.get(db, node.id)
            assert fresh.provision_state == states.ACTIVE
            assert fresh.reservation is None and fresh.last_error is None
            if host == 'conductor-b':
                assert fresh.conductor_affinity == second.ctx.conductor_id
                assert fresh.driver_internal_info[
                    fake.TAKEN_OVER_BY] == 'conductor-b'
            else:
                assert fresh.conductor_affinity == conductor.ctx.conductor_id
                assert fake.TAKEN_OVER_BY not in fresh.driver_internal_info


def test_stopped_conductors_nodes_go_to_the_other(conductor, second, db):
    nodes = _active_nodes(second, db)
    in_maintenance = nodes[0]
    second.manager.set_maintenance(in_maintenance.uuid, True, 'hands off')
    second.stop()
    takeover.NodeTakeover().sync_local_state(conductor.ctx)
    for node in nodes:
        fresh = node_obj.Node.get(db, node.id)
        if node is in_maintenance:
            assert fresh.conductor_affinity == second_id(db)
        else:
            assert fresh.conductor_affinity == conductor.ctx.conductor_id
            assert fresh.driver_internal_info[fake.TAKEN_OVER_BY] == (
                conductor.ctx.host)


def second_id(db):
    return conductor_obj.get(db, 'conductor-b').id


def test_failed_take_over_leaves_the_node_active_and_retries(
        conductor, second, db):
    nodes = _active_nodes(second, db, 2)
    for node in nodes:
        node.driver_info['fake_fail'] = ['take_over']
        node.save()
    second.stop()
    takeover.NodeTakeover().sync_local_state(conductor.ctx)
    for node in nodes:
        fresh = node_obj.Node.get(db, node.id)
        assert (fresh.provision_state, fresh.reservation,
                fresh.maintenance) == (states.ACTIVE, None, False)
        assert fresh.conductor_affinity == second_id(db)
        assert fresh.last_error.startswith(
            'Take-over by conductor test-conductor failed (previous '
            'conductor: conductor-b): fake take_over failure')
        assert 'sync_local_state_interval' in fresh.last_error
        fresh.driver_info = {}
        fresh.save()
    takeover.NodeTakeover().sync_local_state(conductor.ctx)
    for node in nodes:
        fresh = node_obj.Node.get(db, node.id)
        assert fresh.conductor_affinity == conductor.ctx.conductor_id
        assert fresh.last_error is None


def test_periodic_tasks_visit_only_their_share(conductor, second, db):
    nodes = [to_state(conductor.manager, db, enroll(conductor.manager),
                      'manageable') for _ in range(NODES)]
    for node in nodes:
        node.driver_info['fake_fail'] = ['power']
        node.save()
    owners = _split(db, nodes)
    assert set(owners) == {conductor.ctx.host, 'conductor-b'}, owners
    for svc in (conductor, second):
        svc.power_sync.sync_power_states(svc.ctx)
        # Each conductor asked only the BMCs of its own nodes.
        assert set(svc.power_sync.failures) == {
            n.uuid for n in owners[svc.ctx.host]}
        rows = ownership.node_rows(svc.ctx, ['id'])
        assert {r.uuid for r in rows} == {n.uuid for n in owners[svc.ctx.host]}
