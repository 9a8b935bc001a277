# SPDX-License-Identifier: Apache-2.0
"""Every provisioning flow, end to end on fake-hardware, real database."""

import pytest

from ferrum.common import exception
from ferrum.common import states
from ferrum.objects import node as node_obj
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import resume
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state


def test_manage_verifies_power_and_reads_state(conductor, db):
    node = enroll(conductor.manager)
    assert node.provision_state == states.ENROLL
    assert node.power_interface == 'fake'
    conductor.manager.do_provisioning_action(node.uuid, 'manage')
    node = settled(db, node.id, states.MANAGEABLE)
    assert node.power_state == states.POWER_OFF
    assert node.last_error is None


def test_provide_runs_automated_clean_steps(conductor, db):
    node = to_state(conductor.manager, db, enroll(
        conductor.manager, fake_async=['erase_devices']), 'manageable')
    conductor.manager.do_provisioning_action(node.uuid, 'provide')
    node = settled(db, node.id, states.CLEANWAIT)
    assert node.clean_step['step'] == 'erase_devices'
    assert node.target_provision_state == states.AVAILABLE
    resume(conductor.manager, node)
    node = settled(db, node.id, states.AVAILABLE)
    assert node.clean_step is None
    assert 'clean_steps' not in node.driver_internal_info


def test_provide_with_automated_clean_disabled(conductor, db, conf):
    conf.set_override('automated_clean', False, 'conductor')
    node = to_state(conductor.manager, db, enroll(
        conductor.manager, fake_fail=['erase_devices']), 'available')
    assert node.last_error is None


def test_async_prepare_cleaning_goes_through_clean_wait(conductor, db):
    node = to_state(conductor.manager, db, enroll(
        conductor.manager, fake_async=['prepare_cleaning']), 'manageable')
    conductor.manager.do_provisioning_action(node.uuid, 'provide')
    settled(db, node.id, states.CLEANWAIT)
    resume(conductor.manager, node)
    settled(db, node.id, states.AVAILABLE)


def test_manual_clean_runs_given_steps(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    conductor.manager.do_provisioning_action(node.uuid, 'clean', {
        'clean_steps': [{'interface': 'deploy', 'step': 'record_message',
                         'args': {'message': 'hello'}}]})
    node = settled(db, node.id, states.MANAGEABLE)
    assert node.driver_internal_info['fake_message'] == 'hello'


@pytest.mark.parametrize('steps, expected', [
    ([{'interface': 'deploy', 'step': 'nope'}], 'no step nope'),
    ([{'interface': 'deploy', 'step': 'record_message'}],
     r"missing arguments \['message'\]"),
    (None, 'needs "clean_steps"'),
])
def test_manual_clean_rejects_bad_steps(conductor, db, steps, expected):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    with pytest.raises(exception.Invalid, match=expected):
        conductor.manager.do_provisioning_action(
            node.uuid, 'clean', {'clean_steps': steps})
    node = node_obj.Node.get(db, node.id)
    assert (node.provision_state, node.reservation) == (states.MANAGEABLE,
                                                        None)


def test_deploy_and_undeploy(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'active')
    assert node.power_state == states.POWER_ON
    assert node.target_provision_state is None
    conductor.manager.do_provisioning_action(node.uuid, 'undeploy')
    node = settled(db, node.id, states.AVAILABLE)
    assert node.power_state == states.POWER_OFF
    assert node.instance_info == {}


def test_async_deploy_waits_for_callback(conductor, db):
    node = to_state(conductor.manager, db, enroll(
        conductor.manager, fake_async=['deploy']), 'available')
    conductor.manager.do_provisioning_action(node.uuid, 'deploy')
    node = settled(db, node.id, states.DEPLOYWAIT)
    assert node.target_provision_state == states.ACTIVE
    resume(conductor.manager, node)
    settled(db, node.id, states.ACTIVE)


def test_rebuild_redeploys_an_active_node(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'active')
    before = node.provision_updated_at
    conductor.manager.do_provisioning_action(node.uuid, 'rebuild')
    node = settled(db, node.id, states.ACTIVE)
    assert node.provision_updated_at > before


@pytest.mark.parametrize('hook, wait_state, failed', [
    ('deploy', states.DEPLOYWAIT, states.DEPLOYFAIL),
    ('erase_devices', states.CLEANWAIT, states.CLEANFAIL),
])
def test_abort_while_waiting(conductor, db, hook, wait_state, failed):
    node = to_state(conductor.manager, db, enroll(
        conductor.manager, fake_async=[hook]), 'manageable')
    conductor.manager.do_provisioning_action(node.uuid, 'provide')
    if hook == 'deploy':
        settled(db, node.id, states.AVAILABLE)
        conductor.manager.do_provisioning_action(node.uuid, 'deploy')
    settled(db, node.id, wait_state)
    conductor.manager.do_provisioning_action(node.uuid, 'abort')
    node = settled(db, node.id, failed)
    assert 'aborted' in node.last_error
    assert node.clean_step is None


def test_adopt_makes_a_manageable_node_active(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    conductor.manager.do_provisioning_action(node.uuid, 'adopt')
    node = settled(db, node.id, states.ACTIVE)
    assert node.power_state == states.POWER_ON


def test_inspect_fills_properties(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    conductor.manager.do_provisioning_action(node.uuid, 'inspect')
    node = settled(db, node.id, states.MANAGEABLE)
    assert node.properties['cpus'] == 8


def test_invalid_transition_names_current_state(conductor, db):
    node = enroll(conductor.manager)
    with pytest.raises(exception.InvalidStateRequested,
                       match='while it is in state "enroll"'):
        conductor.manager.do_provisioning_action(node.uuid, 'deploy')
    with pytest.raises(exception.InvalidParameterValue,
                       match='Unknown provision action'):
        conductor.manager.do_provisioning_action(node.uuid, 'explode')
    assert node_obj.Node.get(db, node.id).reservation is None


def test_power_on_off_reboot(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    for target, result in [(states.POWER_ON, states.POWER_ON),
                           (states.POWER_OFF, states.POWER_OFF),
                           (states.REBOOT, states.POWER_ON),
                           (states.SOFT_POWER_OFF, states.POWER_OFF)]:
        conductor.manager.change_node_power_state(node.uuid, target,
                                                  timeout=30)
        node = settled(db, node.id, states.MANAGEABLE)
        assert (node.power_state, node.target_power_state) == (result, None)


def test_power_failure_records_last_error(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    node.driver_info['fake_fail'] = ['power']
    node.save()
    conductor.manager.change_node_power_state(node.uuid, states.POWER_ON)
    node = settled(db, node.id, states.MANAGEABLE)
    assert node.target_power_state is None
    assert 'fake power failure' in node.last_error
    assert node.power_state == states.POWER_OFF


def test_maintenance_on_and_off(conductor, db):
    node = enroll(conductor.manager)
    conductor.manager.set_maintenance(node.uuid, True, 'disk swap')
    node = node_obj.Node.get(db, node.id)
    assert (node.maintenance, node.maintenance_reason) == (True, 'disk swap')
    conductor.manager.set_maintenance(node.uuid, False)
    node = node_obj.Node.get(db, node.id)
    assert (node.maintenance, node.maintenance_reason) == (False, None)


def test_boot_device_and_validate(conductor, db):
    node = enroll(conductor.manager)
    conductor.manager.set_boot_device(node.uuid, 'pxe', persistent=True)
    assert conductor.manager.get_boot_device(node.uuid) == {
        'boot_device': 'pxe', 'persistent': True}
    assert 'pxe' in conductor.manager.get_supported_boot_devices(node.uuid)
    result = conductor.manager.validate_driver_interfaces(node.uuid)
    assert all(r['result'] for r in result.values())


def test_delete_only_in_allowed_states(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'active')
    with pytest.raises(exception.InvalidState, match='set maintenance'):
        conductor.manager.destroy_node(node.uuid)
    conductor.manager.set_maintenance(node.uuid, True)
    conductor.manager.destroy_node(node.uuid)
    with pytest.raises(exception.NodeNotFound):
        node_obj.Node.get(db, node.id)


def test_manual_clean_keeps_manageable_target_while_waiting(conductor, db):
    node = to_state(conductor.manager, db, enroll(
        conductor.manager, fake_async=['prepare_cleaning']), 'manageable')
    conductor.manager.do_provisioning_action(node.uuid, 'clean', {
        'clean_steps': [{'interface': 'deploy', 'step': 'record_message',
                         'args': {'message': 'hi'}}]})
    node = settled(db, node.id, states.CLEANWAIT)
    assert node.target_provision_state == states.MANAGEABLE
    resume(conductor.manager, node)
    settled(db, node.id, states.MANAGEABLE)


def test_operator_cannot_fire_conductor_events_mid_operation(conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    node.provision_state = states.CLEANING  # as if a clean were running
    node.save()
    with pytest.raises(exception.InvalidStateRequested,
                       match='state "cleaning"'):
        conductor.manager.do_provisioning_action(node.uuid, 'manage')
