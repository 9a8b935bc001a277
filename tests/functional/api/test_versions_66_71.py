# SPDX-License-Identifier: Apache-2.0
"""Versions 1.66 to 1.71: what each brings, served or refused clearly."""

import pytest

from tests.functional.api.tenancy import fault


def _v(minor):
    return {'X-OpenStack-Ironic-API-Version': '1.%d' % minor}


@pytest.fixture
def node(client):
    return client.post('/v1/nodes', headers=_v(65), json={
        'driver': 'fake-hardware'}).get_json()['uuid']


def test_1_71_is_served(client):
    response = client.get('/v1', headers=_v(71))
    assert response.status_code == 200
    assert response.headers['X-OpenStack-Ironic-API-Version'] == '1.71'


def test_network_data_is_shown_empty_from_1_66_and_never_set(client, node):
    assert 'network_data' not in client.get(
        '/v1/nodes/%s' % node, headers=_v(65)).get_json()
    assert client.get('/v1/nodes/%s' % node, headers=_v(66)).get_json()[
        'network_data'] == {}
    response = client.post('/v1/nodes', headers=_v(65), json={
        'driver': 'fake-hardware', 'network_data': {}})
    assert response.status_code == 406
    response = client.post('/v1/nodes', headers=_v(66), json={
        'driver': 'fake-hardware', 'network_data': {'links': []}})
    assert response.status_code == 400
    assert 'network_data is not served' in fault(response)
    response = client.post('/v1/nodes', headers=_v(66), json={
        'driver': 'fake-hardware', 'network_data': {}})
    assert response.status_code == 201


def test_deploy_steps_and_disable_ramdisk_need_their_versions(client, node):
    def provision(minor, **body):
        return client.put('/v1/nodes/%s/states/provision' % node,
                          headers=_v(minor), json=body)
    assert provision(68, target='active', deploy_steps=[]).status_code == 406
    response = provision(69, target='active', deploy_steps=[
        {'interface': 'deploy', 'step': 'x', 'args': {}, 'priority': 1}])
    assert response.status_code == 400
    assert 'deploy_steps are not served' in fault(response)
    response = provision(69, target='manage', deploy_steps=[])
    assert response.status_code == 400
    response = provision(69, target='clean', disable_ramdisk=True,
                         clean_steps=[{'interface': 'deploy',
                                       'step': 'erase_devices'}])
    assert response.status_code == 406
    response = provision(70, target='clean', disable_ramdisk=True,
                         clean_steps=[{'interface': 'deploy',
                                       'step': 'erase_devices'}])
    assert response.status_code == 400
    assert 'disable_ramdisk is not served' in fault(response)


def test_agent_verify_ca_needs_1_68(client, node):
    response = client.post('/v1/heartbeat/%s' % node, headers=_v(67), json={
        'callback_url': 'http://192.0.2.1:9999', 'agent_verify_ca': True})
    assert response.status_code == 400
    assert 'needs 1.68' in fault(response)
    response = client.post('/v1/heartbeat/%s' % node, headers=_v(68), json={
        'callback_url': 'http://192.0.2.1:9999', 'agent_verify_ca': True})
    # Accepted; the node is not waiting for an agent.
    assert response.status_code == 404
