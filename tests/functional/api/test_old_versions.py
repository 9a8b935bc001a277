# SPDX-License-Identifier: Apache-2.0
"""Ironic's version history from 1.1: each boundary ferrum implements.

Every test sends the last version without a feature and the first with
it, so a boundary that moves fails here.
"""

import json

import pytest

from ferrum.objects import node as node_obj


def _v(minor):
    return {'X-OpenStack-Ironic-API-Version': '1.%d' % minor}


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


def _create(client, minor, **values):
    values.setdefault('driver', 'fake-hardware')
    response = client.post('/v1/nodes', json=values, headers=_v(minor))
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def test_no_header_is_1_1_and_nodes_start_available(client, db):
    response = client.post('/v1/nodes', json={'driver': 'fake-hardware'})
    assert response.status_code == 201
    assert response.headers['X-OpenStack-Ironic-API-Version'] == '1.1'
    node = response.get_json()
    # Stored "available", shown as the pre-1.2 "None"; no power state.
    assert node['provision_state'] is None and node['power_state'] is None
    stored = node_obj.Node.get(db, node['uuid'])
    assert stored.provision_state == 'available'
    assert 'driver_internal_info' not in node and 'name' not in node
    shown = client.get('/v1/nodes/' + node['uuid'], headers=_v(2))
    assert shown.get_json()['provision_state'] == 'available'
    states = client.get('/v1/nodes/%s/states' % node['uuid']).get_json()
    assert states['provision_state'] is None
    # RAID came with 1.12.
    assert 'raid_config' not in states and 'target_raid_config' not in states


@pytest.mark.parametrize('minor, state', [(10, 'available'),
                                          (11, 'enroll')])
def test_initial_state_changes_at_1_11(client, minor, state):
    node = _create(client, minor)
    assert node['provision_state'] == state
    assert node['power_state'] is None


def test_node_created_at_1_10_can_be_deleted(client):
    uuid = _create(client, 10)['uuid']
    assert client.delete('/v1/nodes/' + uuid,
                         headers=_v(10)).status_code == 204
    assert client.get('/v1/nodes/' + uuid, headers=_v(10)).status_code == 404


def test_driver_internal_info_from_1_3(client):
    uuid = _create(client, 10)['uuid']
    assert 'driver_internal_info' not in client.get(
        '/v1/nodes/' + uuid, headers=_v(2)).get_json()
    assert 'driver_internal_info' in client.get(
        '/v1/nodes/' + uuid, headers=_v(3)).get_json()


@pytest.mark.parametrize('target, minor', [('manage', 4), ('provide', 4),
                                           ('inspect', 6), ('abort', 13),
                                           ('clean', 15), ('adopt', 17)])
def test_provision_targets_appear_at_their_version(client, target, minor):
    uuid = _create(client, 11)['uuid']
    response = client.put('/v1/nodes/%s/states/provision' % uuid,
                          headers=_v(minor - 1), json={'target': target})
    assert response.status_code == 406
    assert '1.%d' % minor in _fault(response)
    response = client.put('/v1/nodes/%s/states/provision' % uuid,
                          headers=_v(minor), json={'target': target})
    assert response.status_code != 406


@pytest.mark.parametrize('target', ['deploy', 'undeploy'])
def test_targets_of_1_73(client, target):
    uuid = _create(client, 11)['uuid']
    response = client.put('/v1/nodes/%s/states/provision' % uuid,
                          headers=_v(72), json={'target': target})
    assert response.status_code == 406
    assert '1.73' in _fault(response)
    # From 1.73 the target is known: the enrolled node refuses it (400),
    # as it refuses "active" and "deleted".
    response = client.put('/v1/nodes/%s/states/provision' % uuid,
                          headers=_v(73), json={'target': target})
    assert response.status_code == 400, response.get_data(as_text=True)


def test_names_from_1_5(client):
    response = client.post('/v1/nodes', headers=_v(4), json={
        'driver': 'fake-hardware', 'name': 'n1'})
    assert response.status_code == 406
    uuid = _create(client, 5, name='n1')['uuid']
    # Before 1.5 a name addresses nothing, as in Ironic.
    assert client.get('/v1/nodes/n1', headers=_v(4)).status_code == 404
    assert client.get('/v1/nodes/n1', headers=_v(5)).get_json()[
        'uuid'] == uuid
    assert client.get('/v1/nodes/' + uuid, headers=_v(4)).status_code == 200


@pytest.mark.parametrize('name', ['Upper', 'under_score', 'tilde~'])
def test_unreserved_characters_in_names_from_1_10(client, name):
    response = client.post('/v1/nodes', headers=_v(9), json={
        'driver': 'fake-hardware', 'name': name})
    assert response.status_code == 400
    assert 'host name' in _fault(response)
    assert _create(client, 10, name=name)['name'] == name


def test_hostname_names_before_1_10(client):
    assert _create(client, 9, name='rack1-n2.example')['name'] == (
        'rack1-n2.example')


def test_inspection_fields_from_1_6_and_clean_step_from_1_7(client):
    uuid = _create(client, 11)['uuid']
    at = {minor: client.get('/v1/nodes/' + uuid, headers=_v(minor)
                            ).get_json() for minor in (5, 6, 7)}
    assert 'inspection_started_at' not in at[5]
    assert 'inspection_started_at' in at[6] and 'clean_step' not in at[6]
    assert 'clean_step' in at[7]


@pytest.mark.parametrize('path', ['/v1/nodes', '/v1/ports', '/v1/drivers'])
def test_fields_from_1_8(client, conductor, path):
    response = client.get(path + '?fields=uuid' if 'drivers' not in path
                          else path + '?fields=name', headers=_v(7))
    assert response.status_code == 406
    assert '1.8' in _fault(response)
    response = client.get(path + '?fields=uuid' if 'drivers' not in path
                          else path + '?fields=name', headers=_v(8))
    assert response.status_code == 200


def test_provision_state_filter_from_1_9(client):
    _create(client, 10)
    response = client.get('/v1/nodes?provision_state=available',
                          headers=_v(8))
    assert response.status_code == 406
    response = client.get('/v1/nodes?provision_state=available',
                          headers=_v(9))
    assert len(response.get_json()['nodes']) == 1


def test_inspect_wait_is_inspecting_before_1_39(client, db):
    uuid = _create(client, 11)['uuid']
    node = node_obj.Node.get(db, uuid)
    node.provision_state = 'inspect wait'
    node.save()
    assert client.get('/v1/nodes/' + uuid, headers=_v(38)).get_json()[
        'provision_state'] == 'inspecting'
    assert client.get('/v1/nodes/' + uuid, headers=_v(39)).get_json()[
        'provision_state'] == 'inspect wait'


@pytest.mark.parametrize('minor, present, absent', [
    (1, {'nodes', 'ports', 'drivers'}, {'conductors', 'allocations'}),
    (49, {'conductors'}, {'allocations'}),
    (52, {'conductors', 'allocations'}, set()),
])
def test_v1_document_links_what_the_version_serves(client, minor, present,
                                                   absent):
    body = client.get('/v1', headers=_v(minor)).get_json()
    assert present <= set(body) and not absent & set(body)
    hrefs = [link['href'] for link in body['links']]
    assert all('//' not in href.split('://', 1)[1] for href in hrefs)
    assert {link['rel'] for link in body['links']} == {'self', 'describedby'}


def test_port_node_filter_by_name_from_1_5(client):
    _create(client, 5, name='port-owner')
    response = client.get('/v1/ports?node=port-owner', headers=_v(4))
    assert response.status_code == 406
    response = client.get('/v1/ports?node=port-owner', headers=_v(5))
    assert response.status_code == 200 and response.get_json()['ports'] == []


def test_lease_node_filter_by_name_from_1_5(client):
    """Leases are not versioned, but a node name is an ident from 1.5."""
    _create(client, 5, name='lease-owner')
    response = client.get('/v1/leases?node=lease-owner', headers=_v(4))
    assert response.status_code == 406
    assert 'A node name needs API version 1.5 or later' in _fault(response)
    response = client.get('/v1/leases?node=lease-owner', headers=_v(5))
    assert response.status_code == 200
    assert response.get_json()['leases'] == []


def test_aborting_inspection_from_1_41(client, db):
    uuid = _create(client, 11)['uuid']
    node = node_obj.Node.get(db, uuid)
    node.provision_state = 'inspect wait'
    node.save()
    response = client.put('/v1/nodes/%s/states/provision' % uuid,
                          headers=_v(40), json={'target': 'abort'})
    assert response.status_code == 406 and '1.41' in _fault(response)
    response = client.put('/v1/nodes/%s/states/provision' % uuid,
                          headers=_v(41), json={'target': 'abort'})
    assert response.status_code == 202


def test_summary_list_at_1_1_has_no_name(client):
    _create(client, 5, name='summary-1')
    nodes = client.get('/v1/nodes', headers=_v(1)).get_json()['nodes']
    assert set(nodes[0]) == {'uuid', 'instance_uuid', 'power_state',
                             'provision_state', 'maintenance', 'links'}
    nodes = client.get('/v1/nodes', headers=_v(5)).get_json()['nodes']
    assert nodes[0]['name'] == 'summary-1'
