# SPDX-License-Identifier: Apache-2.0
"""An ipmi node's whole life through the REST API of a real ferrum process,
with real ipmitool against the BMC simulator.
"""

import requests

from tests.functional.server import running_ferrum
from tests.polling import wait_for

HEADERS = {'X-OpenStack-Ironic-API-Version': '1.65'}
CONF = {
    'DEFAULT': {'enabled_hardware_types': 'fake-hardware,ipmi',
                'enabled_power_interfaces': 'fake,ipmitool',
                'enabled_management_interfaces': 'fake,noop,ipmitool',
                'enabled_deploy_interfaces': 'fake,ramdisk',
                'debug': 'true'},
    'ipmi': {'min_command_interval': '0', 'command_retry_timeout': '5',
             'power_poll_interval': '0.05'},
}


def _call(method, url, body=None, expect=200):
    response = requests.request(method, url, json=body, headers=HEADERS,
                                timeout=30)
    assert response.status_code == expect, response.text
    return response.json() if response.content else None


def _settle(url, uuid, state):
    def check():
        node = _call('GET', '%s/v1/nodes/%s' % (url, uuid))
        if node['provision_state'] == state and not node[
                'target_provision_state']:
            return node
        assert not node['last_error'], node['last_error']
        return None
    return wait_for(check, timeout=60, interval=0.05,
                    what='node %s to be %s' % (uuid, state))


def test_deploy_and_undeploy_an_ipmi_node(tmp_path, bmc):
    with running_ferrum(tmp_path, CONF) as url:
        node = _call('POST', url + '/v1/nodes', {
            'driver': 'ipmi', 'name': 'rack1-u7',
            'driver_info': {'ipmi_address': '127.0.0.1',
                            'ipmi_port': bmc.port,
                            'ipmi_username': bmc.user,
                            'ipmi_password': bmc.password}}, expect=201)
        assert node['driver_info']['ipmi_password'] == '******'
        assert node['deploy_interface'] == 'ramdisk'
        assert node['power_interface'] == 'ipmitool'
        uuid = node['uuid']
        validation = _call('GET', '%s/v1/nodes/%s/validate' % (url, uuid))
        assert validation['power']['result'] is True
        assert validation['management']['result'] is True

        for target, state in (('manage', 'manageable'),
                              ('provide', 'available'),
                              ('active', 'active')):
            _call('PUT', '%s/v1/nodes/%s/states/provision' % (url, uuid),
                  {'target': target}, expect=202)
            node = _settle(url, uuid, state)
        assert node['power_state'] == 'power on'
        sim = bmc.sim.state(bmc.port)
        assert (sim['power'], sim['boot_device'], sim['persistent']) == (
            'on', 'pxe', True)
        boot = _call('GET', '%s/v1/nodes/%s/management/boot_device'
                     % (url, uuid))
        assert boot == {'boot_device': 'pxe', 'persistent': True}

        _call('PUT', '%s/v1/nodes/%s/states/provision' % (url, uuid),
              {'target': 'deleted'}, expect=202)
        node = _settle(url, uuid, 'available')
        assert node['power_state'] == 'power off'
        sim = bmc.sim.state(bmc.port)
        assert (sim['power'], sim['boot_device'], sim['persistent']) == (
            'off', 'disk', True)

        listed = _call('GET', url + '/v1/nodes/detail?driver=ipmi')
        assert [n['driver_info']['ipmi_password']
                for n in listed['nodes']] == ['******']
    output = (tmp_path / 'ferrum.out').read_text()
    assert 'ipmitool' in output  # debug logging was on
    assert bmc.password not in output
