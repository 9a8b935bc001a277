# SPDX-License-Identifier: Apache-2.0
"""Versions 1.79 to 1.87: what each brings, served or refused as Ironic.
(Self-service nodes, 1.80, have their own tests.)"""

import pytest

from ferrum.objects import node as node_obj
from tests.functional.api import versions
from tests.functional.api.tenancy import fault
from tests.functional.conductor.flows import to_state

_v = versions.v


def _node(client, minor=87, **values):
    return versions.node(client, minor, **values)


def _patch(client, ident, minor=87, **values):
    return client.patch('/v1/nodes/%s' % ident, headers=_v(minor), json=[
        {'op': 'add', 'path': '/%s' % name, 'value': value}
        for name, value in values.items()])


def _uuids(client, query, minor=87):
    response = client.get('/v1/nodes%s' % query, headers=_v(minor))
    assert response.status_code == 200, response.get_data(as_text=True)
    return {n['uuid'] for n in response.get_json()['nodes']}


@pytest.fixture
def available(conductor, db):
    """An available fake-hardware node of resource class "gold"."""
    def make(name, **values):
        node = conductor.manager.create_node(dict(
            values, driver='fake-hardware', name=name,
            resource_class='gold'))
        return to_state(conductor.manager, db, node, 'available')
    return make


def test_an_allocation_takes_the_node_named_like_it_at_1_79(
        client, db, available):
    for index in range(4):
        available('rack-%d' % index)
    response = client.post('/v1/allocations', headers=_v(79), json={
        'resource_class': 'gold', 'name': 'rack-2'})
    assert response.status_code == 201
    assert response.get_json()['node_uuid'] == node_obj.Node.get(
        db, 'rack-2').uuid


def test_shard_field_and_filters_from_1_82(client):
    a, b = _node(client)['uuid'], _node(client)['uuid']
    plain = _node(client)['uuid']
    assert 'shard' not in client.get('/v1/nodes/%s' % a,
                                     headers=_v(81)).get_json()
    # As for every field before its version (see test_node.py).
    assert _patch(client, a, 81, shard='x').status_code == 400
    assert _patch(client, a, shard='east').status_code == 200
    assert _patch(client, b, shard='west').status_code == 200
    assert client.get('/v1/nodes/%s' % a,
                      headers=_v(82)).get_json()['shard'] == 'east'
    assert _uuids(client, '?shard=east') == {a}
    assert _uuids(client, '?shard=east,west') == {a, b}
    assert _uuids(client, '?sharded=true') == {a, b}
    assert plain in _uuids(client, '?sharded=false')
    assert a not in _uuids(client, '?sharded=false')
    for query in ('?shard=east', '?sharded=true'):
        response = client.get('/v1/nodes' + query, headers=_v(81))
        assert response.status_code == 406, query


def test_shards_list_counts_nodes_per_shard_as_ironic(client):
    for shard in ('a', 'a', 'b'):
        _patch(client, _node(client)['uuid'], shard=shard)
    _node(client)
    response = client.get('/v1/shards', headers=_v(82))
    assert response.status_code == 200
    assert response.get_json() == {'shards': [
        {'name': 'a', 'count': 2}, {'name': 'None', 'count': 1},
        {'name': 'b', 'count': 1}]}
    assert client.get('/v1/shards', headers=_v(81)).status_code == 404
    assert client.get('/v1/shards/a', headers=_v(82)).status_code == 404
    links = client.get('/v1', headers=_v(82)).get_json()
    assert 'shards' in links
    assert 'shards' not in client.get('/v1', headers=_v(81)).get_json()


def test_child_nodes_from_1_83(client):
    parent = _node(client, name='chassis-1')
    child = _node(client, parent_node='chassis-1')
    # Stored (and shown) as the parent's UUID.
    assert child['parent_node'] == parent['uuid']
    assert 'parent_node' not in client.get(
        '/v1/nodes/%s' % child['uuid'], headers=_v(82)).get_json()
    # Lists leave children out, at every version, unless asked.
    assert child['uuid'] not in _uuids(client, '')
    assert child['uuid'] not in _uuids(client, '', minor=65)
    assert child['uuid'] in _uuids(client, '?include_children=true')
    assert _uuids(client, '?parent_node=%s' % parent['uuid']) == {
        child['uuid']}
    assert client.get('/v1/nodes?include_children=true',
                      headers=_v(82)).status_code == 406
    children = client.get('/v1/nodes/chassis-1/children', headers=_v(83))
    assert children.status_code == 200
    body = children.get_json()
    assert body['children'] == [child['uuid']]
    assert body['links']['rel'] == 'children'
    assert body['links']['href'].endswith(
        '/v1/nodes?parent_node=%s' % parent['uuid'])
    assert client.get('/v1/nodes/chassis-1/children',
                      headers=_v(82)).status_code == 404


def test_a_parent_must_exist_and_share_the_owner(client):
    parent = _node(client, owner='p1')
    for values in ({'parent_node': 'nope'},
                   {'parent_node': parent['uuid']},
                   {'parent_node': parent['uuid'], 'owner': 'p2'}):
        response = client.post('/v1/nodes', headers=_v(87), json=dict(
            values, driver='fake-hardware'))
        assert response.status_code == 400, values
        assert 'Requested value was invalid' in fault(response)
    node = _node(client, owner='p1')
    response = _patch(client, node['uuid'], parent_node=node['uuid'])
    assert response.status_code == 400
    response = _patch(client, node['uuid'], parent_node=parent['uuid'])
    assert response.status_code == 200
    assert response.get_json()['parent_node'] == parent['uuid']


def test_allocations_skip_child_nodes(client, db, available):
    parent = available('big')
    available('part', parent_node=parent.uuid)
    response = client.post('/v1/allocations', headers=_v(83), json={
        'resource_class': 'gold', 'candidate_nodes': ['part']})
    assert response.status_code == 201
    allocation = response.get_json()
    assert allocation['state'] == 'error'
    assert 'child nodes' in allocation['last_error']


def test_inventory_is_ironics_404_for_a_node_without_one(client):
    uuid = _node(client)['uuid']
    response = client.get('/v1/nodes/%s/inventory' % uuid, headers=_v(81))
    assert response.status_code == 404
    assert 'Node inventory record for node %s' % uuid in fault(response)
    response = client.get('/v1/nodes/%s/inventory' % uuid, headers=_v(80))
    assert response.status_code == 404
    assert 'needs 1.81' in fault(response)


def test_continue_inspection_finds_no_node(client):
    body = {'inventory': {'interfaces': []}}
    response = client.post('/v1/continue_inspection', headers=_v(84),
                           json=body)
    assert response.status_code == 404
    assert 'inspects out of band' in fault(response)
    response = client.post('/v1/continue_inspection', headers=_v(83),
                           json=body)
    assert 'needs 1.84' in fault(response)


@pytest.mark.parametrize('target, minor, words', [
    ('unhold', 85, 'is ever held'),
    ('service', 87, 'servicing is not served'),
])
def test_unhold_and_service_are_refused(client, target, minor, words):
    uuid = _node(client)['uuid']
    url = '/v1/nodes/%s/states/provision' % uuid
    response = client.put(url, headers=_v(minor), json={'target': target})
    assert response.status_code == 400
    assert words in fault(response)
    response = client.put(url, headers=_v(minor - 1), json={'target': target})
    assert response.status_code == 406


def test_service_step_is_empty_from_1_87(client):
    uuid = _node(client)['uuid']
    assert client.get('/v1/nodes/%s' % uuid,
                      headers=_v(87)).get_json()['service_step'] == {}
    assert 'service_step' not in client.get(
        '/v1/nodes/%s' % uuid, headers=_v(86)).get_json()


def test_firmware_is_an_empty_list_from_1_86(client):
    node = _node(client, firmware_interface='no-firmware')
    assert node['firmware_interface'] == 'no-firmware'
    response = client.get('/v1/nodes/%s/firmware' % node['uuid'],
                          headers=_v(86))
    assert response.status_code == 200
    assert response.get_json() == {'firmware': []}
    assert client.get('/v1/nodes/%s/firmware' % node['uuid'],
                      headers=_v(85)).status_code == 404
    response = client.post('/v1/nodes', headers=_v(86), json={
        'driver': 'fake-hardware', 'firmware_interface': 'redfish'})
    assert response.status_code == 400
    response = client.post('/v1/nodes', headers=_v(85), json={
        'driver': 'fake-hardware', 'firmware_interface': 'no-firmware'})
    assert response.status_code == 406
    driver = client.get('/v1/drivers/fake-hardware', headers=_v(86))
    assert driver.get_json()['default_firmware_interface'] == 'no-firmware'


def test_ports_of_shards_from_1_82(client):
    east = _node(client)['uuid']
    west = _node(client)['uuid']
    _patch(client, east, shard='east')
    for index, node in enumerate((east, west)):
        response = client.post('/v1/ports', headers=_v(87), json={
            'node_uuid': node, 'address': '52:54:00:00:02:%02d' % index})
        assert response.status_code == 201
    ports = client.get('/v1/ports?shard=east,north&fields=node_uuid',
                       headers=_v(82)).get_json()['ports']
    assert [p['node_uuid'] for p in ports] == [east]
    assert client.get('/v1/ports?shard=east',
                      headers=_v(81)).status_code == 406
    response = client.get('/v1/ports?shard=east&node=%s' % east,
                          headers=_v(82))
    assert response.status_code == 403
    assert client.get('/v1/nodes/%s/ports?shard=east' % east,
                      headers=_v(82)).status_code == 403
