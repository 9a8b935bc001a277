# SPDX-License-Identifier: Apache-2.0
"""Versions 1.88 to 1.98: what each brings, served or refused as Ironic.
(Port fields, 1.88, 1.94 and 1.97, have their own tests; virtual media
against a real BMC emulator: tests/functional/redfish/
test_redfish_vmedia_api.py.)"""

import pytest

from ferrum.objects import node as node_obj
from tests.functional.api import versions
from tests.functional.api.tenancy import fault
from tests.polling import wait_for

_v = versions.v


def _node(client, minor=98, **values):
    return versions.node(client, minor, **values)


_CD = {'device_type': 'cdrom', 'image_url': 'http://192.0.2.1/boot.iso'}


def test_vmedia_on_a_driver_without_it_fails_as_ironics(client, db):
    uuid = _node(client)['uuid']
    url = '/v1/nodes/%s/vmedia' % uuid
    # Accepted, then refused by the driver on the worker: last_error.
    response = client.post(url, headers=_v(89), json=_CD)
    assert response.status_code == 204
    error = wait_for(lambda: node_obj.Node.get(db, uuid).last_error,
                     timeout=30, what='the attach to fail')
    assert 'does not support attach_virtual_media' in error
    assert client.delete(url, headers=_v(89)).status_code == 204
    response = client.get(url, headers=_v(93))
    assert response.status_code == 400
    assert 'does not support get_virtual_media' in fault(response)


def test_vmedia_routes_appear_at_their_versions(client):
    url = '/v1/nodes/%s/vmedia' % _node(client)['uuid']
    assert client.post(url, headers=_v(88), json=_CD).status_code == 404
    assert client.delete(url, headers=_v(88)).status_code == 404
    assert client.get(url, headers=_v(92)).status_code == 404
    response = client.post('/v1/nodes/nope/vmedia', headers=_v(89), json=_CD)
    assert response.status_code == 404


@pytest.mark.parametrize('body, words', [
    ({'device_type': 'tape', 'image_url': 'http://x/y'}, 'device_type'),
    ({'device_type': 'cdrom', 'image_url': 'ftp://x/y'},
     'Unsupported or missing URL scheme: ftp'),
    ({'device_type': 'cdrom'}, 'image_url'),
    ({'device_type': 'cdrom', 'image_url': 'http://x/y', 'other': 1},
     'other'),
])
def test_vmedia_attach_checks_its_body(client, body, words):
    url = '/v1/nodes/%s/vmedia' % _node(client)['uuid']
    response = client.post(url, headers=_v(89), json=body)
    assert response.status_code == 400
    assert words in fault(response)


def test_vmedia_detach_checks_device_types(client):
    url = '/v1/nodes/%s/vmedia?device_types=cdrom,tape' % _node(
        client)['uuid']
    response = client.delete(url, headers=_v(89))
    assert response.status_code == 400
    assert 'Invalid device type(s) tape' in fault(response)


def test_vtep_keys_between_1_90_and_1_104(client):
    uuid = _node(client)['uuid']
    link = {'switch_id': '0a:1b:2c:3d:4e:5f', 'port_id': 'p1',
            'vtep-logical-switch': 'ls1', 'vtep-physical-switch': 'ps1'}
    for minor, status in ((89, 406), (90, 201), (105, 406)):
        response = client.post('/v1/ports', headers=_v(minor), json={
            'node_uuid': uuid, 'address': '52:54:00:00:01:%02d' % minor,
            'local_link_connection': link})
        assert response.status_code == status, (minor, response.get_data())


def test_json_suffix_is_dropped_before_1_91(client):
    plain = _node(client, name='n1')
    suffixed = _node(client, name='n2.json')
    response = client.get('/v1/nodes/n1.json', headers=_v(90))
    assert response.get_json()['uuid'] == plain['uuid']
    # Not found once dropped: looked up again with the suffix.
    response = client.get('/v1/nodes/n2.json', headers=_v(90))
    assert response.get_json()['uuid'] == suffixed['uuid']
    # From 1.91 the path is taken as written.
    assert client.get('/v1/nodes/n1.json',
                      headers=_v(91)).status_code == 404
    response = client.get('/v1/nodes/n2.json', headers=_v(91))
    assert response.get_json()['uuid'] == suffixed['uuid']
    assert client.get('/v1/nodes.json', headers=_v(90)).status_code == 200
    # Without a version header the path is left alone, as Ironic does.
    assert client.get('/v1/nodes.json').status_code == 404


def test_runbooks_and_inspection_rules_are_not_served(client):
    for path in ('/v1/runbooks', '/v1/inspection_rules'):
        assert client.get(path, headers=_v(98)).status_code == 404, path


def test_disable_power_off_from_1_95(client):
    node = _node(client)
    assert node['disable_power_off'] is False
    assert 'disable_power_off' not in client.get(
        '/v1/nodes/%s' % node['uuid'], headers=_v(94)).get_json()
    response = client.patch('/v1/nodes/%s' % node['uuid'], headers=_v(95),
                            json=[{'op': 'replace',
                                   'path': '/disable_power_off',
                                   'value': 'true'}])
    assert response.status_code == 200
    assert response.get_json()['disable_power_off'] is True
    url = '/v1/nodes/%s/states/power' % node['uuid']
    for target in ('power off', 'soft power off'):
        response = client.put(url, headers=_v(95), json={'target': target})
        assert response.status_code == 409, target
        assert 'disable_power_off' in fault(response)
    assert client.put(url, headers=_v(95), json={
        'target': 'rebooting'}).status_code == 202


def test_escaped_keys_in_patch_paths_at_1_98(client):
    uuid = _node(client)['uuid']
    response = client.patch('/v1/nodes/%s' % uuid, headers=_v(98), json=[
        {'op': 'add', 'path': '/extra/a~1b~0c', 'value': 1}])
    assert response.status_code == 200
    assert response.get_json()['extra'] == {'a/b~c': 1}
    response = client.patch('/v1/nodes/%s' % uuid, headers=_v(98), json=[
        {'op': 'remove', 'path': '/extra/a~1b~0c'}])
    assert response.get_json()['extra'] == {}
    # The field's own name, escaped: an unknown field either way.
    response = client.patch('/v1/nodes/%s' % uuid, headers=_v(98), json=[
        {'op': 'add', 'path': '/ex~1tra', 'value': 1}])
    assert response.status_code == 400
    assert '/ex/tra' in fault(response)
