# SPDX-License-Identifier: Apache-2.0
"""A redfish node through the REST API of a real ferrum process, against
the real sushy-emulator: the password masked, clear errors and never a
500, and an outage of the BMC that heals without an operator.
"""

import requests

from tests.functional.redfish.emulator import Emulator
from tests.functional.server import running_ferrum
from tests.polling import wait_for

HEADERS = {'X-OpenStack-Ironic-API-Version': '1.65'}
CONF = {
    'DEFAULT': {'enabled_hardware_types': 'fake-hardware,redfish',
                'enabled_power_interfaces': 'fake,redfish',
                'enabled_management_interfaces': 'fake,noop,redfish',
                'enabled_deploy_interfaces': 'fake,ramdisk',
                'debug': 'true'},
    'redfish': {'power_poll_interval': '0.2', 'connect_timeout': '2',
                'server_side_retries_delay': '0.1'},
    'conductor': {'power_state_change_timeout': '90',
                  'sync_power_state_interval': '1',
                  'power_state_sync_max_retries': '2'},
}


def _call(method, url, body=None, expect=200):
    response = requests.request(method, url, json=body, headers=HEADERS,
                                timeout=60)
    assert response.status_code == expect, response.text
    return response.json() if response.content else None


def _node(url, uuid):
    return _call('GET', '%s/v1/nodes/%s' % (url, uuid))


def _power(url, uuid, target):
    _call('PUT', '%s/v1/nodes/%s/states/power' % (url, uuid),
          {'target': target}, expect=202)
    return wait_for(lambda: (lambda n: n if not n['target_power_state']
                             else None)(_node(url, uuid)),
                    timeout=120, interval=0.1, what='power %s' % target)


def test_a_redfish_node_through_the_api(tmp_path, emulator, system):
    with running_ferrum(tmp_path, CONF) as url:
        node = _call('POST', url + '/v1/nodes', {
            'driver': 'redfish', 'name': 'rf-1',
            'driver_info': emulator.driver_info(system)}, expect=201)
        assert node['driver_info']['redfish_password'] == '******'
        assert node['power_interface'] == 'redfish'
        assert node['management_interface'] == 'redfish'
        assert node['deploy_interface'] == 'ramdisk'
        uuid = node['uuid']
        validation = _call('GET', '%s/v1/nodes/%s/validate' % (url, uuid))
        assert validation['power']['result'] is True
        assert validation['management']['result'] is True

        node = _power(url, uuid, 'power on')
        assert (node['power_state'], node['last_error']) == ('power on',
                                                             None)
        assert emulator.system(system)['PowerState'] == 'On'

        _call('PUT', '%s/v1/nodes/%s/management/boot_device' % (url, uuid),
              {'boot_device': 'pxe', 'persistent': True}, expect=204)
        assert _call('GET', '%s/v1/nodes/%s/management/boot_device'
                     % (url, uuid)) == {'boot_device': 'pxe',
                                        'persistent': True}
        assert emulator.system(system)['Boot'][
            'BootSourceOverrideTarget'] == 'Pxe'

        properties = _call('GET', url + '/v1/drivers/redfish/properties')
        assert 'redfish_verify_ca' in properties
        assert properties['redfish_address'].startswith('Required.')
    output = (tmp_path / 'ferrum.out').read_text()
    assert emulator.password not in output


def test_bad_driver_info_is_a_clear_400_never_a_500(tmp_path, emulator,
                                                    system):
    with running_ferrum(tmp_path, CONF) as url:
        wrong = _call('POST', url + '/v1/nodes', {
            'driver': 'redfish', 'driver_info': emulator.driver_info(
                system, redfish_password='Wr0ng-s3cret')}, expect=201)
        response = requests.get('%s/v1/nodes/%s/management/boot_device'
                                % (url, wrong['uuid']), headers=HEADERS,
                                timeout=60)
        assert response.status_code == 400, response.text
        assert 'redfish_password' in response.text
        assert 'Wr0ng-s3cret' not in response.text
        assert 'Traceback' not in response.text

        node = _power(url, wrong['uuid'], 'power on')
        assert 'redfish_username' in node['last_error']
        assert 'Wr0ng-s3cret' not in node['last_error']

        lost = _call('POST', url + '/v1/nodes', {
            'driver': 'redfish', 'driver_info': emulator.driver_info(
                system, redfish_system_id='nope')}, expect=201)
        response = requests.get('%s/v1/nodes/%s/management/boot_device'
                                % (url, lost['uuid']), headers=HEADERS,
                                timeout=60)
        assert response.status_code == 400, response.text
        assert 'redfish_system_id' in response.text and system in (
            response.text)

        # As in Ironic, a node is created with any driver_info; validate
        # says what is wrong.
        bad = _call('POST', url + '/v1/nodes', {
            'driver': 'redfish',
            'driver_info': {'redfish_address': 'ftp://bmc'}}, expect=201)
        check = _call('GET', '%s/v1/nodes/%s/validate' % (url, bad['uuid']))
        assert check['power']['result'] is False
        assert 'redfish_address' in check['power']['reason']
    output = (tmp_path / 'ferrum.out').read_text()
    assert 'Wr0ng-s3cret' not in output
    assert 'Traceback' not in output


def test_bmc_outage_then_recovery_without_an_operator(tmp_path):
    emu = Emulator(tmp_path / 'bmc', systems=1)
    emu.start()
    try:
        with running_ferrum(tmp_path, CONF) as url:
            node = _call('POST', url + '/v1/nodes', {
                'driver': 'redfish',
                'driver_info': emu.driver_info(emu.uuids[0])}, expect=201)
            uuid = node['uuid']
            _call('PUT', '%s/v1/nodes/%s/states/provision' % (url, uuid),
                  {'target': 'manage'}, expect=202)
            wait_for(lambda: _node(url, uuid)['provision_state']
                     == 'manageable', timeout=60, what='manageable')
            assert _power(url, uuid, 'power on')['power_state'] == (
                'power on')

            emu.stop()
            # The sync fails twice: maintenance, power state as last known.
            node = wait_for(lambda: (lambda n: n if n['maintenance'] else
                                     None)(_node(url, uuid)),
                            timeout=90, interval=0.2,
                            what='the sync to notice the outage')
            assert node['fault'] == 'power failure'
            assert node['power_state'] == 'power on'
            assert 'did not answer' in node['maintenance_reason']

            emu.start()
            node = wait_for(lambda: (lambda n: n if not n['maintenance']
                                     else None)(_node(url, uuid)),
                            timeout=90, interval=0.2,
                            what='the node to leave maintenance')
            assert (node['fault'], node['power_state']) == (None,
                                                            'power on')
            assert _call('GET', '%s/v1/nodes/%s/management/boot_device'
                         % (url, uuid))['boot_device'] == 'disk'
        output = (tmp_path / 'ferrum.out').read_text()
        assert 'Traceback' not in output
        assert ' 500 ' not in output
    finally:
        emu.stop()
