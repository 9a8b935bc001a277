# SPDX-License-Identifier: Apache-2.0
"""Chassis through the API: create, list, get, PATCH, delete, a chassis'
nodes, and a node's chassis_uuid."""

import json

from ferrum.objects import node as node_obj

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
MISSING = '8d6f8a3e-4d1c-4b51-9b0e-6b7b0b7b0b7b'


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


def _create(client, **values):
    response = client.post('/v1/chassis', json=values, headers=V)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def test_create_get_patch_delete(client):
    response = client.post('/v1/chassis', headers=V, json={
        'description': 'rack 4', 'extra': {'row': 'b'}})
    assert response.status_code == 201
    chassis = response.get_json()
    assert response.headers['Location'].endswith(
        '/v1/chassis/' + chassis['uuid'])
    assert chassis['description'] == 'rack 4'
    assert chassis['extra'] == {'row': 'b'}
    assert chassis['created_at'].endswith('+00:00')
    assert chassis['updated_at'] is None
    # Ironic's shape: a list holding the list of links.
    assert chassis['nodes'][0][0]['href'].endswith(
        '/v1/chassis/%s/nodes' % chassis['uuid'])
    assert chassis['nodes'][0][1]['rel'] == 'bookmark'
    one = '/v1/chassis/' + chassis['uuid']
    assert client.get(one, headers=V).get_json() == chassis
    response = client.patch(one, headers=V, json=[
        {'op': 'add', 'path': '/extra/answer', 'value': 42},
        {'op': 'remove', 'path': '/description'}])
    assert response.status_code == 200, response.get_data(as_text=True)
    patched = response.get_json()
    assert patched['extra'] == {'row': 'b', 'answer': 42}
    assert patched['description'] is None
    assert patched['updated_at'] is not None
    assert client.get(one, headers=V).get_json()['extra']['answer'] == 42
    assert client.delete(one, headers=V).status_code == 204
    response = client.get(one, headers=V)
    assert response.status_code == 404
    assert _fault(response) == 'Chassis %s could not be found.' % (
        chassis['uuid'])


def test_create_refuses_bad_bodies(client):
    response = client.post('/v1/chassis', headers=V,
                           json={'description': 'x' * 256})
    assert response.status_code == 400
    response = client.post('/v1/chassis', headers=V, json={'name': 'x'})
    assert response.status_code == 400
    response = client.post('/v1/chassis', headers=V, json={'uuid': 'nope'})
    assert response.status_code == 400
    assert 'UUID' in _fault(response)
    given = _create(client, uuid=MISSING.upper())
    assert given['uuid'] == MISSING
    response = client.post('/v1/chassis', headers=V, json={'uuid': MISSING})
    assert response.status_code == 409
    assert _fault(response) == (
        'A chassis with UUID %s already exists.' % MISSING)


def test_patch_refuses_read_only_and_bad_values(client):
    chassis = _create(client)
    one = '/v1/chassis/' + chassis['uuid']
    response = client.patch(one, headers=V, json=[
        {'op': 'replace', 'path': '/uuid', 'value': MISSING}])
    assert response.status_code == 400
    assert 'read-only' in _fault(response)
    response = client.patch(one, headers=V, json=[
        {'op': 'replace', 'path': '/description', 'value': 'x' * 256}])
    assert response.status_code == 400
    response = client.patch(one, headers=V, json=[
        {'op': 'remove', 'path': '/extra'}])
    assert response.status_code == 200
    assert response.get_json()['extra'] == {}


def test_list_detail_fields_and_paging(client):
    made = [_create(client, description='c%d' % i) for i in range(3)]
    listed = client.get('/v1/chassis', headers=V).get_json()['chassis']
    assert [c['uuid'] for c in listed] == [c['uuid'] for c in made]
    assert set(listed[0]) == {'uuid', 'description', 'links'}
    detail = client.get('/v1/chassis/detail', headers=V).get_json()
    assert set(detail['chassis'][0]) == {
        'uuid', 'description', 'extra', 'created_at', 'updated_at', 'links',
        'nodes'}
    assert client.get('/v1/chassis/detail?fields=uuid',
                      headers=V).status_code == 400
    same = client.get('/v1/chassis?detail=true', headers=V).get_json()
    assert same['chassis'] == detail['chassis']
    fields = client.get('/v1/chassis?fields=uuid,extra', headers=V)
    assert set(fields.get_json()['chassis'][0]) == {'uuid', 'extra', 'links'}
    response = client.get('/v1/chassis?fields=bogus', headers=V)
    assert response.status_code == 400
    page = client.get('/v1/chassis?limit=2', headers=V).get_json()
    assert [c['uuid'] for c in page['chassis']] == [
        c['uuid'] for c in made[:2]]
    assert 'marker=%s' % made[1]['uuid'] in page['next']
    rest = client.get('/v1/chassis?limit=2&marker=' + made[1]['uuid'],
                      headers=V).get_json()
    assert [c['uuid'] for c in rest['chassis']] == [made[2]['uuid']]
    assert 'next' not in rest
    down = client.get('/v1/chassis?sort_key=description&sort_dir=desc',
                      headers=V).get_json()['chassis']
    assert [c['description'] for c in down] == ['c2', 'c1', 'c0']
    assert client.get('/v1/chassis?sort_key=extra',
                      headers=V).status_code == 400
    assert client.get('/v1/chassis?marker=nope', headers=V).status_code == 400
    assert client.get('/v1/chassis?marker=' + MISSING,
                      headers=V).status_code == 404
    assert client.get('/v1/chassis/nope', headers=V).status_code == 400


def test_nodes_of_a_chassis_and_chassis_uuid(client, db):
    chassis = _create(client)
    other = _create(client)
    response = client.post('/v1/nodes', headers=V, json={
        'driver': 'fake-hardware', 'name': 'in-chassis',
        'chassis_uuid': chassis['uuid']})
    assert response.status_code == 201, response.get_data(as_text=True)
    node = response.get_json()
    assert node['chassis_uuid'] == chassis['uuid']
    alone = node_obj.Node.create(db, {'driver': 'fake-hardware'})
    nodes = client.get('/v1/chassis/%s/nodes' % chassis['uuid'],
                       headers=V).get_json()['nodes']
    assert [n['uuid'] for n in nodes] == [node['uuid']]
    detail = client.get('/v1/chassis/%s/nodes/detail' % chassis['uuid'],
                        headers=V).get_json()['nodes']
    assert detail[0]['chassis_uuid'] == chassis['uuid']
    filtered = client.get('/v1/nodes?chassis_uuid=' + chassis['uuid'],
                          headers=V).get_json()['nodes']
    assert [n['uuid'] for n in filtered] == [node['uuid']]
    assert client.get('/v1/nodes?chassis_uuid=' + MISSING,
                      headers=V).status_code == 404
    assert client.get('/v1/nodes?chassis_uuid=nope',
                      headers=V).status_code == 400
    assert client.get('/v1/chassis/%s/nodes' % MISSING,
                      headers=V).status_code == 404
    # A chassis that holds a node cannot go (Ironic's ChassisNotEmpty).
    response = client.delete('/v1/chassis/' + chassis['uuid'], headers=V)
    assert response.status_code == 400
    assert _fault(response) == (
        'Cannot complete the requested action because chassis %s contains '
        'nodes.' % chassis['uuid'])
    # Moved by PATCH; an unknown chassis is a 400.
    one = '/v1/nodes/' + node['uuid']
    response = client.patch(one, headers=V, json=[
        {'op': 'replace', 'path': '/chassis_uuid', 'value': MISSING}])
    assert response.status_code == 400
    assert _fault(response) == 'Chassis %s could not be found.' % MISSING
    response = client.patch(one, headers=V, json=[
        {'op': 'replace', 'path': '/chassis_uuid', 'value': other['uuid']}])
    assert response.status_code == 200
    assert response.get_json()['chassis_uuid'] == other['uuid']
    assert client.delete('/v1/chassis/' + chassis['uuid'],
                         headers=V).status_code == 204
    # Removing it needs 1.25, as in Ironic.
    old = {'X-OpenStack-Ironic-API-Version': '1.24'}
    response = client.patch(one, headers=old, json=[
        {'op': 'remove', 'path': '/chassis_uuid'}])
    assert response.status_code == 406
    response = client.patch(one, headers=V, json=[
        {'op': 'remove', 'path': '/chassis_uuid'}])
    assert response.status_code == 200
    assert response.get_json()['chassis_uuid'] is None
    shown = client.get('/v1/nodes/%s' % alone.uuid, headers=V).get_json()
    assert shown['chassis_uuid'] is None


def test_node_create_refuses_unknown_chassis(client):
    response = client.post('/v1/nodes', headers=V, json={
        'driver': 'fake-hardware', 'chassis_uuid': MISSING})
    assert response.status_code == 400
    assert _fault(response) == 'Chassis %s could not be found.' % MISSING
    response = client.post('/v1/nodes', headers=V, json={
        'driver': 'fake-hardware', 'chassis_uuid': 'nope'})
    assert response.status_code == 400


def test_node_storage_interface_is_noop_only(client):
    response = client.post('/v1/nodes', headers=V, json={
        'driver': 'fake-hardware', 'storage_interface': 'cinder'})
    assert response.status_code == 400
    assert 'does not boot nodes from volumes' in _fault(response)
    response = client.post('/v1/nodes', headers=V, json={
        'driver': 'fake-hardware', 'storage_interface': 'noop'})
    assert response.status_code == 201
    node = response.get_json()
    assert node['storage_interface'] == 'noop'
    response = client.patch('/v1/nodes/' + node['uuid'], headers=V, json=[
        {'op': 'replace', 'path': '/storage_interface', 'value': 'cinder'}])
    assert response.status_code == 400
    assert 'does not boot nodes from volumes' in _fault(response)
