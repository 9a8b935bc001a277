# SPDX-License-Identifier: Apache-2.0
"""The oneview hardware type in a real conductor, with the real hpOneView
client against the OneView simulator: dynamic allocation around deploy and
cleaning, boot order, power, validation and session expiry.
"""

import pytest

from ferrum.common import exception
from ferrum.common import states
from tests.functional.oneview.driver import act
from tests.functional.oneview.driver import allocation
from tests.functional.oneview.driver import enroll
from tests.functional.oneview.driver import get
from tests.functional.oneview.driver import profiles
from tests.functional.oneview.driver import quiet
from tests.functional.oneview.driver import tasks

APPLIED = 'applied_server_profile_uri'


def _available(conductor, db, sim, index=0, **values):
    node = enroll(conductor, sim, index, **values)
    assert act(conductor, db, node, 'manage').provision_state == 'manageable'
    node = act(conductor, db, node, 'provide')
    assert (node.provision_state, node.last_error) == ('available', None)
    return node


def test_provide_cleans_with_a_temporary_profile_then_removes_it(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim)
    created = tasks(sim, 'Create')
    assert len(created) == 1 and len(tasks(sim, 'Delete')) == 1
    assert 'ferrum cleaning [%s]' % node.uuid in str(created[0])
    assert profiles(sim) == []
    assert APPLIED not in node.driver_info
    assert sim.hardware(node.driver_info['server_hardware_uri'])[
        'serverProfileUri'] is None


def test_deploy_applies_a_profile_and_undeploy_cleans_with_it_then_frees(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim, name='bay-1')
    hw_uri = node.driver_info['server_hardware_uri']

    node = act(ov_conductor, db, node, 'deploy')
    assert (node.provision_state, node.last_error) == ('active', None)
    applied = node.driver_info[APPLIED]
    hardware = sim.hardware(hw_uri)
    assert (hardware['serverProfileUri'], hardware['powerState']) == (
        applied, 'On')
    [profile] = profiles(sim)
    assert profile['name'] == 'bay-1 [%s]' % node.uuid
    assert profile['bootOrder'][0] == 'PXE'   # the ramdisk deploy's choice
    assert ov_conductor.manager.get_boot_device(node.uuid) == {
        'boot_device': 'pxe', 'persistent': True}
    ov_conductor.manager.set_boot_device(node.uuid, 'disk', persistent=True)
    assert profiles(sim)[0]['bootOrder'][0] == 'HardDisk'
    creates = len(tasks(sim, 'Create'))

    node = act(ov_conductor, db, node, 'deleted')
    assert (node.provision_state, node.last_error) == ('available', None)
    # Cleaning reused the deploy's profile, then removed it.
    assert len(tasks(sim, 'Create')) == creates
    assert profiles(sim) == []
    hardware = sim.hardware(hw_uri)
    assert (hardware['serverProfileUri'], hardware['powerState']) == (
        None, 'Off')
    assert APPLIED not in node.driver_info
    assert node.power_state == states.POWER_OFF


def test_undeploy_without_automated_cleaning_removes_the_profile(
        ov_conductor, db, oneview_simulator, conf):
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim)
    node = act(ov_conductor, db, node, 'deploy')
    assert node.provision_state == 'active'
    conf.set_override('automated_clean', False, 'conductor')
    node = act(ov_conductor, db, node, 'deleted')
    assert (node.provision_state, node.last_error) == ('available', None)
    assert profiles(sim) == [] and APPLIED not in node.driver_info


def test_power_through_oneview_and_refused_on_oneview_hardware(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = enroll(ov_conductor, sim)
    node = act(ov_conductor, db, node, 'manage')
    assert node.power_state == states.POWER_OFF   # read at verification
    ov_conductor.manager.change_node_power_state(node.uuid, states.POWER_ON)
    node = quiet(db, node)
    assert sim.hardware(sim.hardware_uris()[0])['powerState'] == 'On'
    assert node.power_state == states.POWER_ON

    sim.take(sim.hardware_uris()[0])
    ov_conductor.manager.change_node_power_state(node.uuid, states.POWER_OFF)
    node = quiet(db, node)
    assert 'in use by OneView' in node.last_error
    assert sim.hardware(sim.hardware_uris()[0])['powerState'] == 'On'


def test_validation_reads_the_template_against_the_hardware(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    good = enroll(ov_conductor, sim, 0)
    bad = enroll(ov_conductor, sim, 1,
                 template=sim.incompatible_template_uri)
    missing = ov_conductor.manager.create_node({
        'driver': 'oneview', 'driver_info': {}})
    result = ov_conductor.manager.validate_driver_interfaces(good.uuid)
    assert all(r['result'] for r in result.values()), result
    result = ov_conductor.manager.validate_driver_interfaces(bad.uuid)
    assert result['deploy']['result'] is False
    assert 'server hardware type' in result['deploy']['reason']
    assert 'enclosure group' in result['deploy']['reason']
    assert result['power']['result'] is True
    result = ov_conductor.manager.validate_driver_interfaces(missing.uuid)
    assert 'server_hardware_uri is required' in result['power']['reason']

    bad = act(ov_conductor, db, bad, 'manage')
    bad = act(ov_conductor, db, bad, 'provide')
    assert bad.provision_state == 'clean failed'
    assert 'do not match' in bad.last_error
    assert profiles(sim) == []


def test_an_expired_session_is_renewed_once(ov_conductor, db,
                                            oneview_simulator):
    sim = oneview_simulator
    node = act(ov_conductor, db, enroll(ov_conductor, sim), 'manage')
    counts = sim.request_counts()['requests']
    logins = counts.get('POST /rest/login-sessions', 0)
    sim.fault('expire_sessions')
    ov_conductor.manager.change_node_power_state(node.uuid, states.POWER_ON)
    node = quiet(db, node)
    assert (node.power_state, node.last_error) == (states.POWER_ON, None)
    counts = sim.request_counts()['requests']
    assert counts['POST /rest/login-sessions'] == logins + 1


def test_task_error_applying_the_profile_fails_the_deploy(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim)
    sim.fault('task_error', match='Create', count=1,
              error_code='ProfileApplyFailed', message='BIOS said no')
    node = act(ov_conductor, db, node, 'deploy')
    assert node.provision_state == 'deploy failed'
    assert 'BIOS said no' in node.last_error
    assert APPLIED not in node.driver_info
    # Undeploy cleans (the fault is spent) and the node is available again.
    node = act(ov_conductor, db, node, 'deleted')
    assert (node.provision_state, node.last_error) == ('available', None)
    assert profiles(sim) == []


@pytest.mark.parametrize('automated_clean', [True, False])
def test_a_profile_already_gone_is_forgotten_by_the_tear_down(
        ov_conductor, db, oneview_simulator, oneview_client, conf,
        automated_clean):
    # What a removal leaves when its conductor died and OneView finished
    # the task afterwards: the node still records a profile that no
    # longer exists, on hardware that is free.
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim)
    node = act(ov_conductor, db, node, 'deploy')
    applied = node.driver_info[APPLIED]
    assert oneview_client.server_profiles.get_by_uri(applied).delete()
    assert profiles(sim) == []
    conf.set_override('automated_clean', automated_clean, 'conductor')
    node = act(ov_conductor, db, node, 'deleted')
    assert (node.provision_state, node.last_error) == ('available', None)
    assert APPLIED not in node.driver_info
    assert profiles(sim) == []


def test_task_error_removing_the_profile_keeps_the_record(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim)
    node = act(ov_conductor, db, node, 'deploy')
    sim.fault('task_error', match='Delete', count=5,
              error_code='ServerNotOff', message='profile busy')
    node = act(ov_conductor, db, node, 'deleted')
    assert node.provision_state == 'clean failed'
    assert 'profile busy' in node.last_error
    # Still recorded: the profile is ours, a later cleaning removes it.
    assert node.driver_info[APPLIED] == profiles(sim)[0]['uri']
    sim.clear_faults()
    ov_conductor.manager.set_maintenance(node.uuid, False)
    node = act(ov_conductor, db, node, 'manage')
    node = act(ov_conductor, db, node, 'provide')
    assert (node.provision_state, node.last_error) == ('available', None)
    assert profiles(sim) == []


def test_appliance_down_fails_tear_down_and_cleaning_clearly(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    active = _available(ov_conductor, db, sim, 0)
    active = act(ov_conductor, db, active, 'deploy')
    manageable = act(ov_conductor, db, enroll(ov_conductor, sim, 1),
                     'manage')
    sim.fault('appliance_down')
    active = act(ov_conductor, db, active, 'deleted')
    assert active.provision_state == 'error'
    assert 'did not answer' in active.last_error, active.last_error
    manageable = act(ov_conductor, db, manageable, 'provide')
    assert manageable.provision_state == 'clean failed'
    assert 'did not answer' in manageable.last_error
    # Back up: the operator retries, nothing was corrupted meanwhile.
    sim.clear_faults()
    active = act(ov_conductor, db, active, 'deleted')
    assert (active.provision_state, active.last_error) == ('available', None)
    assert profiles(sim) == []


def test_a_slow_apply_that_times_out_is_still_cleaned_up(
        ov_conductor, db, oneview_simulator, conf):
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim)
    conf.set_override('task_timeout', 1, 'oneview')
    sim.fault('slow_task', seconds=5, match='Create')
    node = act(ov_conductor, db, node, 'deploy')
    assert node.provision_state == 'deploy failed'
    assert 'task_timeout' in node.last_error
    # OneView went on applying it: ferrum recorded it, so it is ours.
    assert node.driver_info[APPLIED] == profiles(sim)[0]['uri']
    sim.clear_faults()
    # Tear-down waits for OneView to finish the apply before removing it.
    conf.set_override('task_timeout', 30, 'oneview')
    node = act(ov_conductor, db, node, 'deleted')
    assert (node.provision_state, node.last_error) == ('available', None)
    assert profiles(sim) == []
    create, delete = tasks(sim, 'Create')[-1], tasks(sim, 'Delete')[-1]
    assert create['taskState'] == 'Completed'
    assert create['modified'] <= delete['created']


def test_deploy_is_refused_at_once_while_the_appliance_is_down(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim)
    sim.fault('appliance_down')
    with pytest.raises(exception.FerrumException) as caught:
        ov_conductor.manager.do_provisioning_action(node.uuid, 'deploy')
    assert caught.value.code == 503
    assert 'OneView appliance %s did not answer' % sim.address in str(
        caught.value)
    assert get(db, node).provision_state == 'available'
    sim.clear_faults()
    node = act(ov_conductor, db, node, 'deploy')
    assert node.provision_state == 'active'


def test_allocation_never_touches_a_oneview_users_profile(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim)
    hw_uri = node.driver_info['server_hardware_uri']
    sim.take(hw_uri)
    theirs = sim.hardware(hw_uri)['serverProfileUri']
    node = act(ov_conductor, db, node, 'deploy')
    assert node.provision_state == 'deploy failed'
    assert 'is in use by OneView' in node.last_error
    assert isinstance(allocation.HardwareInUse(hardware='h', node='n',
                                               profile='p'),
                      exception.DriverError)
    assert [p['uri'] for p in profiles(sim)] == [theirs]
    assert sim.hardware(hw_uri)['powerState'] == 'Off'
