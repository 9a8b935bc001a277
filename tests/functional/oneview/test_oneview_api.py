# SPDX-License-Identifier: Apache-2.0
"""oneview nodes through the REST API of a real ferrum process, with the
real hpOneView client against the OneView simulator: deploy and undeploy,
the deploy-versus-OneView race, an appliance outage and a task error, and
the periodic tasks of the running conductor (interval 1 s, polled with a
deadline).
"""

import requests

from tests.functional.oneview.driver import capabilities
from tests.functional.oneview.driver import oneview_options
from tests.functional.server import running_ferrum
from tests.polling import wait_for

HEADERS = {'X-OpenStack-Ironic-API-Version': '1.65'}


def _conf(sim, interval):
    options = {name: str(value)
               for name, value in oneview_options(sim).items()}
    options['periodic_check_interval'] = str(interval)
    return {'DEFAULT': {'enabled_hardware_types': 'fake-hardware,oneview',
                        'enabled_power_interfaces': 'fake,oneview',
                        'enabled_management_interfaces': 'fake,oneview',
                        'enabled_deploy_interfaces': 'fake,oneview',
                        'debug': 'true'},
            'oneview': options}


def _call(method, url, body=None, expect=200):
    response = requests.request(method, url, json=body, headers=HEADERS,
                                timeout=30)
    assert response.status_code == expect, response.text
    return response.json() if response.content else None


def _node(url, uuid):
    return _call('GET', '%s/v1/nodes/%s' % (url, uuid))


def _settle(url, uuid, state, error=False, maintenance=None):
    """Wait for ``state`` (with no target unless it is a failure state,
    ``error``); without ``error`` a last_error fails at once."""
    def check():
        node = _node(url, uuid)
        if not error:
            assert not node['last_error'], node['last_error']
        if (node['provision_state'] == state
                and (error or not node['target_provision_state'])
                and (maintenance is None
                     or node['maintenance'] == maintenance)):
            return node
        return None
    return wait_for(check, timeout=60, interval=0.05,
                    what='node %s to be %s' % (uuid, state))


def _move(url, uuid, target):
    _call('PUT', '%s/v1/nodes/%s/states/provision' % (url, uuid),
          {'target': target}, expect=202)


def _enroll(url, sim, index, name):
    node = _call('POST', url + '/v1/nodes', {
        'driver': 'oneview', 'name': name,
        'driver_info': {'server_hardware_uri': sim.hardware_uris()[index]},
        'properties': {'capabilities': capabilities(sim.template_uri)}},
        expect=201)
    assert (node['power_interface'], node['management_interface'],
            node['deploy_interface']) == ('oneview', 'oneview', 'oneview')
    _move(url, node['uuid'], 'manage')
    _settle(url, node['uuid'], 'manageable')
    _move(url, node['uuid'], 'provide')
    return _settle(url, node['uuid'], 'available')


def test_deploy_undeploy_and_the_race_through_the_api(tmp_path,
                                                      oneview_simulator):
    sim = oneview_simulator
    with running_ferrum(tmp_path, _conf(sim, 0)) as url:
        uuid = _enroll(url, sim, 0, 'bay-1')['uuid']
        validation = _call('GET', '%s/v1/nodes/%s/validate' % (url, uuid))
        assert all(validation[kind]['result'] for kind in (
            'power', 'management', 'deploy')), validation
        _move(url, uuid, 'active')
        node = _settle(url, uuid, 'active')
        applied = node['driver_info']['applied_server_profile_uri']
        hw = sim.hardware(sim.hardware_uris()[0])
        assert (hw['serverProfileUri'], hw['powerState']) == (applied, 'On')
        assert node['power_state'] == 'power on'
        _move(url, uuid, 'deleted')
        node = _settle(url, uuid, 'available')
        assert 'applied_server_profile_uri' not in node['driver_info']
        assert sim.state()['profiles'] == []

        # The race: OneView takes the hardware before any periodic run.
        racer = _enroll(url, sim, 1, 'bay-2')['uuid']
        sim.take(sim.hardware_uris()[1])
        _move(url, racer, 'active')
        node = _settle(url, racer, 'deploy failed', error=True)
        assert 'is in use by OneView' in node['last_error']
        _move(url, racer, 'deleted')
        node = _settle(url, racer, 'clean failed', error=True)
        assert 'is in use by OneView' in node['last_error']
        assert node['maintenance'] is True
    # The simulator signs its descriptions with its account name.
    output = (tmp_path / 'ferrum.out').read_text().replace(
        'made by %s' % sim.password, '')
    assert 'hpOneView' in output   # debug logging was on
    assert sim.password not in output


def test_periodic_tasks_of_a_running_conductor(tmp_path, oneview_simulator):
    sim = oneview_simulator
    with running_ferrum(tmp_path, _conf(sim, 1)) as url:
        uuid = _enroll(url, sim, 2, 'bay-3')['uuid']
        hw_uri = sim.hardware_uris()[2]
        sim.take(hw_uri)
        node = _settle(url, uuid, 'manageable', maintenance=True)
        assert node['maintenance_reason'] == 'node in use by OneView'
        sim.free(hw_uri)
        node = _settle(url, uuid, 'available', maintenance=False)
        assert node['maintenance_reason'] is None
        assert sim.state()['profiles'] == []


def test_appliance_down_and_task_errors_through_the_api(tmp_path,
                                                         oneview_simulator):
    sim = oneview_simulator
    with running_ferrum(tmp_path, _conf(sim, 0)) as url:
        uuid = _enroll(url, sim, 3, 'bay-4')['uuid']
        # Appliance down: the deploy is refused at once (503), not a 500,
        # and the node is left as it was.
        sim.fault('appliance_down')
        response = requests.put(
            '%s/v1/nodes/%s/states/provision' % (url, uuid),
            json={'target': 'active'}, headers=HEADERS, timeout=30)
        assert response.status_code == 503, response.text
        assert 'did not answer' in response.text
        assert _node(url, uuid)['provision_state'] == 'available'
        sim.clear_faults()
        # A task error while applying the profile: deploy failed, with
        # OneView's message; after an undeploy the node is clean again.
        sim.fault('task_error', match='Create', count=1,
                  error_code='ProfileApplyFailed', message='BIOS said no')
        _move(url, uuid, 'active')
        node = _settle(url, uuid, 'deploy failed', error=True)
        assert 'BIOS said no' in node['last_error']
        _move(url, uuid, 'deleted')
        node = _settle(url, uuid, 'available')
        assert sim.state()['profiles'] == []
