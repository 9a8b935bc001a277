# SPDX-License-Identifier: Apache-2.0
"""Power-state sync, callback timeouts and start-up recovery.

Time is injected: the conductor's clock is a fake, and periodic methods
are called directly, so nothing sleeps.
"""

import dataclasses
import datetime

import sqlalchemy as sa

from ferrum.common import states
from ferrum.conductor import service
from ferrum.conductor import timeouts
from ferrum.objects import node as node_obj
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state


def test_power_sync_records_real_state(conductor, db, conf):
    conf.set_override('force_power_state_during_sync', False, 'conductor')
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    # The fake BMC reports what the node row says; simulate a change made
    # behind ferrum's back by writing the column the fake reads.
    node.power_state = states.POWER_ON
    node.save()
    conductor.power_sync.sync_power_states(conductor.ctx)
    assert node_obj.Node.get(db, node.id).power_state == states.POWER_ON


def test_power_sync_failures_set_maintenance_then_recover(conductor, db,
                                                          conf):
    conf.set_override('power_state_sync_max_retries', 3, 'conductor')
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    node.driver_info['fake_fail'] = ['power']
    node.save()
    for _ in range(2):
        conductor.power_sync.sync_power_states(conductor.ctx)
        assert not node_obj.Node.get(db, node.id).maintenance
    conductor.power_sync.sync_power_states(conductor.ctx)
    node = node_obj.Node.get(db, node.id)
    assert (node.maintenance, node.fault) == (True,
                                              states.FAULT_POWER_FAILURE)
    assert 'could not be read 3 times' in node.maintenance_reason
    assert node.reservation is None
    node.driver_info = {}
    node.save()
    conductor.power_sync.sync_power_states(conductor.ctx)
    node = node_obj.Node.get(db, node.id)
    assert (node.maintenance, node.fault, node.reservation) == (
        False, None, None)


def test_power_sync_leaves_operator_maintenance_alone(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    conductor.manager.set_maintenance(node.uuid, True, 'operator')
    node = node_obj.Node.get(db, node.id)
    node.driver_info['fake_fail'] = ['power']
    node.save()
    for _ in range(5):
        conductor.power_sync.sync_power_states(conductor.ctx)
    node = node_obj.Node.get(db, node.id)
    assert (node.maintenance_reason, node.fault) == ('operator', None)


def test_callback_timeouts_fail_waiting_nodes(conductor, db, conf):
    conf.set_override('deploy_callback_timeout', 600, 'conductor')
    conf.set_override('clean_callback_timeout', 600, 'conductor')
    deploying = to_state(conductor.manager, db, enroll(
        conductor.manager, fake_async=['deploy']), 'available')
    conductor.manager.do_provisioning_action(deploying.uuid, 'deploy')
    settled(db, deploying.id, states.DEPLOYWAIT)
    cleaning = to_state(conductor.manager, db, enroll(conductor.manager),
                        'manageable')
    cleaning.driver_info['fake_async'] = ['erase_devices']
    cleaning.save()
    conductor.manager.do_provisioning_action(cleaning.uuid, 'provide')
    settled(db, cleaning.id, states.CLEANWAIT)

    now = datetime.datetime.utcnow()
    checker = timeouts.ProvisionTimeouts()
    checker.check_timeouts(dataclasses.replace(
        conductor.ctx, clock=lambda: now + datetime.timedelta(seconds=599)))
    assert node_obj.Node.get(db, deploying.id).provision_state == (
        states.DEPLOYWAIT)
    checker.check_timeouts(dataclasses.replace(
        conductor.ctx, clock=lambda: now + datetime.timedelta(seconds=601)))
    node = settled(db, deploying.id, states.DEPLOYFAIL)
    assert 'deploy_callback_timeout' in node.last_error
    node = settled(db, cleaning.id, states.CLEANFAIL)
    assert 'clean_callback_timeout' in node.last_error


def test_restart_fails_and_unlocks_own_transient_nodes(conf, db):
    first = service.ConductorService(conf, db=db)
    first.start(start_periodics=False)
    busy = enroll(first.manager)
    first.stop()
    # Simulate a crash mid-deploy: the row says deploying, locked by us.
    node = node_obj.Node.get(db, busy.id)
    node.provision_state = states.DEPLOYING
    node.save(reservation=conf.host, target_power_state=states.POWER_ON)
    second = service.ConductorService(conf, db=db)
    second.start(start_periodics=False)
    try:
        node = node_obj.Node.get(db, busy.id)
        assert (node.provision_state, node.reservation,
                node.target_power_state) == (states.DEPLOYFAIL, None, None)
        assert 'restarted' in node.last_error
    finally:
        second.stop()


def test_wait_timeout_counts_from_entering_the_wait_state(conductor, db,
                                                          conf):
    conf.set_override('deploy_callback_timeout', 600, 'conductor')
    node = to_state(conductor.manager, db, enroll(
        conductor.manager, fake_async=['deploy'], fake_deploy_seconds=1),
        'available')
    conductor.manager.do_provisioning_action(node.uuid, 'deploy')
    settled(db, node.id, states.DEPLOYWAIT)
    waiting_since = datetime.datetime.utcnow()
    # 599.5 s after the wait began, but more than 600 s after the deploy
    # began: only a timestamp taken when the wait began keeps the node.
    timeouts.ProvisionTimeouts().check_timeouts(dataclasses.replace(
        conductor.ctx, clock=lambda: waiting_since + datetime.timedelta(
            seconds=599.5)))
    assert node_obj.Node.get(db, node.id).provision_state == (
        states.DEPLOYWAIT)


def test_dead_conductor_locks_are_cleared_and_its_nodes_failed(conductor,
                                                               db, conf):
    from ferrum.conductor import recovery
    from ferrum.objects import conductor as conductor_obj
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'available')
    other = conductor_obj.register(db, 'dead-host', '', 60)
    node.provision_state = states.DEPLOYING
    node.save(reservation='dead-host')
    recovery.DeadConductors().release_dead_conductor_locks(conductor.ctx)
    assert node_obj.Node.get(db, node.id).reservation == 'dead-host'
    # Offline but still beating: stopping gracefully, finishing its work.
    conductor_obj.unregister(db, other.id)
    recovery.DeadConductors().release_dead_conductor_locks(conductor.ctx)
    assert node_obj.Node.get(db, node.id).reservation == 'dead-host'
    with db.writer() as conn:  # its heartbeat expired
        conn.execute(sa.update(conductor_obj.TABLE).where(
            conductor_obj.TABLE.c.id == other.id).values(
                heartbeat_at=datetime.datetime(2020, 1, 1)))
    recovery.DeadConductors().release_dead_conductor_locks(conductor.ctx)
    node = node_obj.Node.get(db, node.id)
    assert (node.provision_state, node.reservation) == (states.DEPLOYFAIL,
                                                        None)
    assert 'dead-host stopped sending heartbeats' in node.last_error


def test_power_sync_leaves_waiting_nodes_alone(conductor, db):
    node = to_state(conductor.manager, db, enroll(
        conductor.manager, fake_async=['deploy']), 'available')
    conductor.manager.do_provisioning_action(node.uuid, 'deploy')
    node = settled(db, node.id, states.DEPLOYWAIT)
    node.driver_info['fake_fail'] = ['power']
    node.save()
    for _ in range(5):
        conductor.power_sync.sync_power_states(conductor.ctx)
    assert conductor.power_sync.failures == {}
    assert not node_obj.Node.get(db, node.id).maintenance
