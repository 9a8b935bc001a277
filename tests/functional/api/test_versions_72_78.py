# SPDX-License-Identifier: Apache-2.0
"""Versions 1.72 to 1.78: what each brings, served or refused clearly.
(Node history, 1.78, has its own file: test_node_history.py.)"""

from tests.functional.api.tenancy import fault


def _v(minor):
    return {'X-OpenStack-Ironic-API-Version': '1.%d' % minor}


def _node(client):
    return client.post('/v1/nodes', headers=_v(65), json={
        'driver': 'fake-hardware'}).get_json()['uuid']


def test_agent_status_in_heartbeats_from_1_72(client):
    uuid = _node(client)
    body = {'callback_url': 'http://192.0.2.1:9999',
            'agent_status': 'start', 'agent_status_message': 'booted'}
    response = client.post('/v1/heartbeat/%s' % uuid, headers=_v(71),
                           json=body)
    assert response.status_code == 400
    assert 'agent_status' in fault(response)
    # Accepted from 1.72: the node, not waiting for an agent, is not found.
    response = client.post('/v1/heartbeat/%s' % uuid, headers=_v(72),
                           json=body)
    assert response.status_code == 404


def test_boot_mode_and_secure_boot_from_1_75_read_only(client):
    uuid = _node(client)
    old = client.get('/v1/nodes/%s' % uuid, headers=_v(74)).get_json()
    assert 'boot_mode' not in old and 'secure_boot' not in old
    new = client.get('/v1/nodes/%s' % uuid, headers=_v(75)).get_json()
    assert (new['boot_mode'], new['secure_boot']) == (None, None)
    response = client.get('/v1/nodes/%s?fields=boot_mode' % uuid,
                          headers=_v(74))
    assert response.status_code == 400
    response = client.patch('/v1/nodes/%s' % uuid, headers=_v(75), json=[
        {'op': 'add', 'path': '/boot_mode', 'value': 'uefi'}])
    assert response.status_code == 400


def test_changing_boot_mode_is_not_served(client):
    uuid = _node(client)
    for what in ('boot_mode', 'secure_boot'):
        response = client.put('/v1/nodes/%s/states/%s' % (uuid, what),
                              headers=_v(76), json={'target': 'uefi'})
        assert response.status_code == 404, what


def test_fields_on_drivers_at_1_77(client):
    response = client.get('/v1/drivers?fields=name', headers=_v(77))
    assert response.status_code == 200
    drivers = response.get_json()['drivers']
    assert drivers and all('name' in d and 'hosts' not in d
                           for d in drivers)
