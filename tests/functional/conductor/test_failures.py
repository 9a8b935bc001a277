# SPDX-License-Identifier: Apache-2.0
"""A driver hook raising lands the node in the right failure state,
unlocked."""


import pytest

from ferrum.common import exception
from ferrum.common import states
from ferrum.objects import node as node_obj
from tests.functional.conductor.flows import busy_workers
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state


@pytest.mark.parametrize('hook, start, action, failed', [
    ('prepare', 'available', 'deploy', states.DEPLOYFAIL),
    ('deploy', 'available', 'deploy', states.DEPLOYFAIL),
    ('prepare_cleaning', 'manageable', 'provide', states.CLEANFAIL),
    ('erase_devices', 'manageable', 'provide', states.CLEANFAIL),
    ('tear_down_cleaning', 'manageable', 'provide', states.CLEANFAIL),
    ('tear_down', 'active', 'undeploy', states.ERROR),
    ('take_over', 'manageable', 'adopt', states.ADOPTFAIL),
    ('inspect', 'manageable', 'inspect', states.INSPECTFAIL),
])
def test_hook_failure(conductor, db, hook, start, action, failed):
    node = to_state(conductor.manager, db, enroll(conductor.manager), start)
    node.driver_info['fake_fail'] = [hook]
    node.save()
    conductor.manager.do_provisioning_action(node.uuid, action)
    node = settled(db, node.id, failed)
    assert 'fake %s failure' % hook in node.last_error
    assert node.reservation is None
    if failed == states.CLEANFAIL:
        assert node.maintenance and node.fault == states.FAULT_CLEAN_FAILURE
        assert node.clean_step is None


def test_tear_down_cleaning_runs_after_a_failed_step(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    node.driver_info['fake_fail'] = ['erase_devices', 'tear_down_cleaning']
    node.save()
    conductor.manager.do_provisioning_action(node.uuid, 'provide')
    node = settled(db, node.id, states.CLEANFAIL)
    # Both errors are reported: the step's, and the tear-down's after it.
    assert 'fake erase_devices failure' in node.last_error
    assert 'tearing down cleaning also failed' in node.last_error


def test_verify_failure_returns_to_enroll(conductor, db):
    node = enroll(conductor.manager, fake_fail=['validate'])
    conductor.manager.do_provisioning_action(node.uuid, 'manage')
    node = settled(db, node.id, states.ENROLL)
    assert 'Verifying the power interface failed' in node.last_error


def test_recovery_from_failure_states(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'available')
    node.driver_info['fake_fail'] = ['deploy']
    node.save()
    conductor.manager.do_provisioning_action(node.uuid, 'deploy')
    node = settled(db, node.id, states.DEPLOYFAIL)
    node.driver_info = {}
    node.save()
    conductor.manager.do_provisioning_action(node.uuid, 'deploy')
    node = settled(db, node.id, states.ACTIVE)
    assert node.last_error is None


def test_full_worker_pool_is_a_temporary_failure(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'available')
    with busy_workers(conductor):
        with pytest.raises(exception.NoFreeConductorWorker) as caught:
            conductor.manager.do_provisioning_action(node.uuid, 'deploy')
        assert caught.value.code == 503
    node = node_obj.Node.get(db, node.id)
    assert (node.provision_state, node.target_provision_state,
            node.reservation) == (states.AVAILABLE, None, None)
    conductor.manager.do_provisioning_action(node.uuid, 'deploy')
    settled(db, node.id, states.ACTIVE)


def test_locked_node_is_a_conflict(conductor, db, conf):
    conf.set_override('node_locked_retry_attempts', 2, 'conductor')
    conf.set_override('node_locked_retry_interval', 0.01, 'conductor')
    node = enroll(conductor.manager)
    node_obj.Node.reserve(db, 'other-host', node.id)
    with pytest.raises(exception.NodeLocked, match='other-host') as caught:
        conductor.manager.do_provisioning_action(node.uuid, 'manage')
    assert caught.value.code == 409
    assert node_obj.Node.get(db, node.id).provision_state == states.ENROLL


def test_database_error_on_hand_over_still_unlocks(conductor, db,
                                                    monkeypatch):
    """A non-ferrum error (here: the database) while handing over."""
    from ferrum.conductor import workers
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')

    def broken_submit(self, func, *args, **kwargs):
        raise RuntimeError('simulated database failure')
    monkeypatch.setattr(workers.WorkerPool, 'submit', broken_submit)
    with pytest.raises(RuntimeError):
        conductor.manager.do_provisioning_action(node.uuid, 'provide')
    node = node_obj.Node.get(db, node.id)
    assert (node.provision_state, node.reservation) == (states.MANAGEABLE,
                                                        None)


def test_a_release_written_after_an_outage_keeps_its_history(conductor, db):
    """A task whose release met a database outage leaves its changes and
    their history entries to the outage recovery, which writes both (and
    then frees the lock)."""
    from ferrum.conductor import outage
    from ferrum.objects import node_history
    ctx = conductor.ctx
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'available')
    held = node_obj.Node.reserve(db, ctx.host, node.id)
    held.provision_state = states.MANAGEABLE
    changes = held.changes()
    # What Task.release hands over when the database is unavailable.
    ctx.inflight.release_failed(held.id, held.uuid, changes,
                                held.history(changes))
    assert outage.recover(ctx)
    node = node_obj.Node.get(db, node.id)
    assert (node.provision_state, node.reservation) == (states.MANAGEABLE,
                                                        None)
    last = node_history.list_for(db, node.id, None)[-1]
    assert last['event'].startswith('Provision state available -> '
                                    'manageable')
    assert last['conductor'] == ctx.host


def test_refused_power_change_leaves_no_target(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    with busy_workers(conductor):
        with pytest.raises(exception.NoFreeConductorWorker):
            conductor.manager.change_node_power_state(node.uuid,
                                                      states.POWER_ON)
    node = node_obj.Node.get(db, node.id)
    assert (node.target_power_state, node.reservation) == (None, None)


def test_passwords_never_reach_database_errors(conductor, db):
    from oslo_db import exception as db_exc
    with pytest.raises(db_exc.DBError) as caught:
        node_obj.Node.create(db, {'driver': 'fake-hardware',
                                  'conductor_group': None,
                                  'driver_info': {'ipmi_password': 's3cret'}})
    assert 's3cret' not in str(caught.value)
