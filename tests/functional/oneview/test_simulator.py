# SPDX-License-Identifier: Apache-2.0
"""The OneView simulator, driven by the real hpOneView 5.3.0 client."""

import math
import os
import socket
import ssl
import threading
import time

import pytest

from tests.polling import wait_for

try:
    from hpOneView import exceptions
    from hpOneView import oneview_client as oneview_client_module
except ImportError:
    if os.environ.get('FERRUM_REQUIRE_REAL') == '1':
        raise  # a missing component fails, never skips
    pytest.skip('hpOneView is not available', allow_module_level=True)


def _new_profile(client, sim, hw_uri, name='ferrum test'):
    spt = client.server_profile_templates.get_by_uri(sim.template_uri)
    body = spt.get_new_profile()
    body.update(name=name, serverHardwareUri=hw_uri,
                serverProfileTemplateUri='')
    return client.server_profiles.create(body)


def test_login_and_bad_password(oneview_simulator, oneview_client):
    assert oneview_client.connection.get_session_id()
    options = oneview_simulator.ferrum_options()
    assert options['manager_url'] == oneview_simulator.address
    assert options['tls_cacert_file'] == oneview_simulator.ca_file
    config = oneview_simulator.client_config()
    config['credentials']['password'] = 'wrong'
    with pytest.raises(exceptions.HPOneViewException) as error:
        oneview_client_module.OneViewClient(config)
    assert error.value.oneview_response['errorCode'] == 'AUTHN_AUTH_FAIL'


def test_a_wrong_ca_is_refused(oneview_simulator, tmp_path):
    import trustme
    other = tmp_path / 'other-ca.pem'
    trustme.CA().cert_pem.write_to_path(str(other))
    config = oneview_simulator.client_config()
    config['ssl_certificate'] = str(other)
    with pytest.raises(exceptions.HPOneViewException):
        oneview_client_module.OneViewClient(config)


def _client(sim):
    return oneview_client_module.OneViewClient(sim.client_config())


def test_listing_pages_and_filters(oneview_simulator):
    oneview_simulator.reset(hardware=25, page_size=10)
    oneview_client = _client(oneview_simulator)
    oneview_simulator.reset_request_counts()
    members = oneview_client.server_hardware.get_all()
    assert [m['uri'] for m in members] == oneview_simulator.hardware_uris()
    counts = oneview_simulator.request_counts()['requests']
    assert counts['GET /rest/server-hardware'] == 3
    page = oneview_client.server_hardware.get_all(start=20, count=10)
    assert len(page) == 5
    name = members[13]['name']
    found = oneview_client.server_hardware.get_by_name(name)
    assert found.data['uri'] == members[13]['uri']
    oneview_simulator.take(members[4]['uri'])
    taken = oneview_client.server_hardware.get_all(
        filter="serverProfileUri<>null")
    assert [m['uri'] for m in taken] == [members[4]['uri']]
    free = oneview_client.server_hardware.get_all(
        filter=['"serverProfileUri=null"', "name matches 'SIM-Encl1,%'"])
    assert len(free) == 11


def test_a_bad_filter_is_an_error(oneview_client):
    with pytest.raises(exceptions.HPOneViewException) as error:
        oneview_client.server_hardware.get_all(filter='no operator here')
    assert error.value.oneview_response['errorCode'] == 'INVALID_FILTER'


def test_unknown_hardware_is_resource_not_found(oneview_simulator,
                                                oneview_client):
    with pytest.raises(exceptions.HPOneViewException) as error:
        oneview_client.server_hardware.get_by_uri(
            '/rest/server-hardware/nonexistent')
    assert error.value.oneview_response['errorCode'] == 'RESOURCE_NOT_FOUND'


def test_types_groups_and_templates(oneview_simulator, oneview_client):
    sh = oneview_client.server_hardware.get_by_uri(
        oneview_simulator.hardware_uris()[0]).data
    sht = oneview_client.server_hardware_types.get_by_uri(
        sh['serverHardwareTypeUri']).data
    group = oneview_client.enclosure_groups.get_by_uri(
        sh['serverGroupUri']).data
    spt = oneview_client.server_profile_templates.get_by_uri(
        oneview_simulator.template_uri).data
    assert spt['serverHardwareTypeUri'] == sht['uri']
    assert spt['enclosureGroupUri'] == group['uri']
    assert spt['macType'] == 'Physical' and spt['boot']['manageBoot']
    other = oneview_client.server_profile_templates.get_by_uri(
        oneview_simulator.incompatible_template_uri).data
    assert other['serverHardwareTypeUri'] != sh['serverHardwareTypeUri']
    assert other['enclosureGroupUri'] != sh['serverGroupUri']
    port = sh['portMap']['deviceSlots'][0]['physicalPorts'][0]
    assert port['type'] == 'Ethernet'
    assert port['virtualPorts'][0]['portFunction'] == 'a'


def test_profile_lifecycle(oneview_simulator, oneview_client):
    hw_uri = oneview_simulator.hardware_uris()[1]
    profile = _new_profile(oneview_client, oneview_simulator, hw_uri)
    assert profile.data['serverHardwareUri'] == hw_uri
    assert profile.data['boot']['order'][0] == 'PXE'
    hw = oneview_simulator.hardware(hw_uri)
    assert hw['serverProfileUri'] == profile.data['uri']
    assert hw['state'] == 'ProfileApplied'

    body = dict(profile.data, boot={'manageBoot': True,
                                    'order': ['HardDisk', 'PXE', 'CD']})
    profile.update(body)
    again = oneview_client.server_profiles.get_by_uri(profile.data['uri'])
    assert again.data['boot']['order'] == ['HardDisk', 'PXE', 'CD']

    assert profile.delete() is True
    assert oneview_simulator.hardware(hw_uri)['serverProfileUri'] is None
    with pytest.raises(exceptions.HPOneViewException):
        oneview_client.server_profiles.get_by_uri(profile.data['uri'])


def test_a_stale_etag_is_refused(oneview_simulator, oneview_client):
    hw_uri = oneview_simulator.hardware_uris()[0]
    profile = _new_profile(oneview_client, oneview_simulator, hw_uri)
    stale = dict(profile.data)
    profile.update(dict(profile.data, name='renamed'))
    with pytest.raises(exceptions.HPOneViewException) as error:
        oneview_client.connection.put(stale['uri'], stale)
    assert error.value.oneview_response['errorCode'] == 'ETAG_MISMATCH'


def test_applying_to_taken_hardware_fails_the_task(oneview_simulator,
                                                   oneview_client):
    hw_uri = oneview_simulator.hardware_uris()[2]
    taken = oneview_simulator.take(hw_uri)
    with pytest.raises(exceptions.HPOneViewTaskError) as error:
        _new_profile(oneview_client, oneview_simulator, hw_uri)
    assert error.value.error_code == 'ProfileAlreadyExistsInServer'
    assert (oneview_simulator.hardware(hw_uri)['serverProfileUri']
            == taken['serverProfileUri'])


def test_take_and_free(oneview_simulator, oneview_client):
    hw_uri = oneview_simulator.hardware_uris()[3]
    taken = oneview_simulator.take(hw_uri)['serverProfileUri']
    sh = oneview_client.server_hardware.get_by_uri(hw_uri).data
    assert sh['serverProfileUri'] == taken
    theirs = oneview_client.server_profiles.get_by_uri(taken).data
    assert theirs['name'].startswith('OneView user profile')
    with pytest.raises(RuntimeError, match='409'):
        oneview_simulator.take(hw_uri)
    oneview_simulator.free(hw_uri)
    sh = oneview_client.server_hardware.get_by_uri(hw_uri).data
    assert sh['serverProfileUri'] is None
    assert sh['state'] == 'NoProfileApplied'
    ours = _new_profile(oneview_client, oneview_simulator, hw_uri)
    oneview_simulator.free(hw_uri)
    assert oneview_simulator.state()['profiles'] == []
    with pytest.raises(exceptions.HPOneViewException):
        ours.refresh()


def test_power_through_tasks(oneview_simulator, oneview_client):
    hw = oneview_client.server_hardware.get_by_uri(
        oneview_simulator.hardware_uris()[0])
    assert hw.data['powerState'] == 'Off'
    assert hw.update_power_state({'powerState': 'On'})['powerState'] == 'On'
    result = hw.update_power_state({'powerState': 'Off',
                                    'powerControl': 'PressAndHold'})
    assert result['powerState'] == 'Off'
    with pytest.raises(exceptions.HPOneViewException):
        hw.update_power_state({'powerState': 'Sideways'})


def test_an_expired_session_needs_a_new_login(oneview_simulator,
                                              oneview_client):
    hw_uri = oneview_simulator.hardware_uris()[0]
    oneview_simulator.fault('expire_sessions')
    with pytest.raises(exceptions.HPOneViewException) as error:
        oneview_client.server_hardware.get_by_uri(hw_uri)
    assert error.value.oneview_response['errorCode'] == 'AUTHORIZATION'
    fresh = _client(oneview_simulator)
    assert fresh.server_hardware.get_by_uri(hw_uri).data['uri'] == hw_uri
    assert oneview_simulator.state()['sessions'] == 1


def test_logout_ends_the_session(oneview_simulator, oneview_client):
    oneview_client.connection.logout()
    assert oneview_simulator.state()['sessions'] == 0


def test_appliance_down_answers_503(oneview_simulator, oneview_client):
    hw_uri = oneview_simulator.hardware_uris()[0]
    oneview_simulator.fault('appliance_down')
    started = time.monotonic()
    with pytest.raises(exceptions.HPOneViewException) as error:
        oneview_client.server_hardware.get_by_uri(hw_uri)
    assert error.value.oneview_response['errorCode'] == 'SERVICE_UNAVAILABLE'
    with pytest.raises(exceptions.HPOneViewException):
        _client(oneview_simulator)
    assert time.monotonic() - started < 5
    oneview_simulator.clear_faults()
    assert oneview_client.server_hardware.get_by_uri(hw_uri).data


def test_appliance_down_resetting_connections(oneview_simulator,
                                              oneview_client):
    hw_uri = oneview_simulator.hardware_uris()[0]
    oneview_simulator.fault('appliance_down', mode='reset', seconds=1)
    started = time.monotonic()
    with pytest.raises((OSError, ssl.SSLError)):
        oneview_client.server_hardware.get_by_uri(hw_uri)
    assert time.monotonic() - started < 5

    def answering():
        try:
            return oneview_client.server_hardware.get_by_uri(hw_uri).data
        except (OSError, ssl.SSLError):
            return None
    wait_for(answering, timeout=10, interval=0.1, what='the appliance back')


def test_task_error_fault(oneview_simulator, oneview_client):
    uris = oneview_simulator.hardware_uris()
    oneview_simulator.fault('task_error', match=uris[1], count=1,
                            error_code='SimulatedError', message='boom')
    _new_profile(oneview_client, oneview_simulator, uris[0])
    with pytest.raises(exceptions.HPOneViewTaskError) as error:
        oneview_client.server_hardware.get_by_uri(
            uris[1]).update_power_state({'powerState': 'On'})
    assert error.value.error_code == 'SimulatedError'
    assert error.value.msg == 'boom'
    assert oneview_simulator.hardware(uris[1])['powerState'] == 'Off'
    # count=1: spent.
    oneview_client.server_hardware.get_by_uri(
        uris[1]).update_power_state({'powerState': 'On'})


def test_a_failed_create_leaves_the_hardware_free(oneview_simulator,
                                                  oneview_client):
    hw_uri = oneview_simulator.hardware_uris()[0]
    oneview_simulator.fault('task_error', match='Create')
    with pytest.raises(exceptions.HPOneViewTaskError):
        _new_profile(oneview_client, oneview_simulator, hw_uri)
    assert oneview_simulator.hardware(hw_uri)['serverProfileUri'] is None
    assert oneview_simulator.state()['profiles'] == []


def test_slow_task_reserves_then_completes(oneview_simulator,
                                           oneview_client):
    hw_uri = oneview_simulator.hardware_uris()[0]
    oneview_simulator.fault('slow_task', seconds=0.5)
    spt = oneview_client.server_profile_templates.get_by_uri(
        oneview_simulator.template_uri)
    body = dict(spt.get_new_profile(), name='slow',
                serverHardwareUri=hw_uri)
    task = oneview_client.connection.post('/rest/server-profiles', body)[0]
    assert task['taskState'] == 'Running'
    hw = oneview_simulator.hardware(hw_uri)
    assert hw['state'] == 'ApplyingProfile' and hw['serverProfileUri']
    wait_for(lambda: oneview_client.tasks.get_by_uri(
        task['uri']).data['taskState'] == 'Completed',
        timeout=10, interval=0.05, what='the slow task')
    assert oneview_simulator.hardware(hw_uri)['state'] == 'ProfileApplied'


def test_slow_task_times_out_in_the_client(oneview_simulator,
                                           oneview_client):
    hw = oneview_client.server_hardware.get_by_uri(
        oneview_simulator.hardware_uris()[0])
    oneview_simulator.fault('slow_task', seconds=30)
    with pytest.raises(exceptions.HPOneViewTimeout):
        hw.update_power_state({'powerState': 'On'}, timeout=0.5)
    assert oneview_simulator.hardware(hw.data['uri'])['powerState'] == (
        'PoweringOn')


def test_hang_request_holds_then_drops_without_acting(oneview_simulator,
                                                     oneview_client):
    sim = oneview_simulator
    hw_uri = sim.hardware_uris()[0]
    sim.fault('hang_request', match='POST /rest/server-profiles',
              seconds=30)
    failures = []

    def create():
        try:
            _new_profile(oneview_client, sim, hw_uri)
        except exceptions.HPOneViewException as exc:
            failures.append(exc)
    thread = threading.Thread(target=create)
    thread.start()
    held = wait_for(lambda: sim.state()['hanging'], timeout=10,
                    interval=0.02, what='the request to be held')
    assert held == ['POST /rest/server-profiles']
    sim.clear_faults()  # ends the hold at once
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert [f.oneview_response['errorCode'] for f in failures] == [
        'SERVICE_UNAVAILABLE']
    assert sim.state()['profiles'] == [] and sim.state()['hanging'] == []


def test_request_counts(oneview_simulator):
    oneview_simulator.reset(hardware=1200)
    oneview_client = _client(oneview_simulator)
    oneview_simulator.reset_request_counts()
    started = time.monotonic()
    members = oneview_client.server_hardware.get_all()
    elapsed = time.monotonic() - started
    assert len(members) == 1200
    counts = oneview_simulator.request_counts()
    assert counts == {'total': math.ceil(1200 / 500), 'requests': {
        'GET /rest/server-hardware': math.ceil(1200 / 500)}}
    assert elapsed < 5
    oneview_client.server_hardware.get_by_uri(members[0]['uri'])
    counts = oneview_simulator.request_counts()['requests']
    assert counts['GET /rest/server-hardware/{id}'] == 1
    oneview_simulator.reset_request_counts()
    assert oneview_simulator.request_counts() == {'total': 0,
                                                  'requests': {}}


def test_admin_stays_up_while_rest_is_down(oneview_simulator):
    oneview_simulator.fault('appliance_down')
    assert oneview_simulator.state()['faults'][0]['kind'] == 'appliance_down'
    with pytest.raises(RuntimeError, match='400'):
        oneview_simulator.fault('no_such_fault')


def test_the_server_never_drops_a_request_silently(oneview_simulator):
    """hpOneView retries a dropped connection forever: always a status."""
    context = ssl.create_default_context(cafile=oneview_simulator.ca_file)
    context.check_hostname = False
    host, port = oneview_simulator.address.split(':')
    with socket.create_connection((host, int(port)), timeout=5) as raw:
        with context.wrap_socket(raw) as tls:
            tls.sendall(b'BREW /rest/version HTTP/1.1\r\nHost: x\r\n\r\n')
            assert tls.recv(100).startswith(b'HTTP/1.1 501')
