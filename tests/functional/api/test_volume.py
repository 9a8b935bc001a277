# SPDX-License-Identifier: Apache-2.0
"""Volume connectors and targets through the API: /v1/volume, create,
list, get, PATCH, delete, a node's, and the power-state rules."""

import json

import pytest

from ferrum.common import states
from ferrum.objects import node as node_obj
from ferrum.objects import volume_target as target_obj

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
OLD = {'X-OpenStack-Ironic-API-Version': '1.31'}
MISSING = '8d6f8a3e-4d1c-4b51-9b0e-6b7b0b7b0b7b'
IQN = 'iqn.2017-07.org.openstack:01:d9a51732c3f'
VOLUME = '04452bed-5367-4202-8bf5-de4335ac56d2'


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


def _node(db, **values):
    values.setdefault('driver', 'fake-hardware')
    values.setdefault('power_state', states.POWER_OFF)
    values.setdefault('provision_state', states.MANAGEABLE)
    return node_obj.Node.create(db, values)


def _connector(client, node, connector_id=IQN, **values):
    values.update(node_uuid=node.uuid, type='iqn', connector_id=connector_id)
    response = client.post('/v1/volume/connectors', json=values, headers=V)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def _target(client, node, boot_index=0, **values):
    values.update(node_uuid=node.uuid, volume_type='iscsi',
                  boot_index=boot_index)
    values.setdefault('volume_id', VOLUME)
    response = client.post('/v1/volume/targets', json=values, headers=V)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def test_volume_links_and_version_gate(client, db):
    node = _node(db, name='n1')
    root = client.get('/v1/volume', headers=V).get_json()
    assert root['connectors'][0]['href'].endswith('/v1/volume/connectors')
    assert root['targets'][1]['rel'] == 'bookmark'
    mine = client.get('/v1/nodes/n1/volume', headers=V).get_json()
    assert mine['targets'][0]['href'].endswith(
        '/v1/nodes/%s/volume/targets' % node.uuid)
    for path in ('/v1/volume', '/v1/volume/connectors', '/v1/volume/targets',
                 '/v1/nodes/n1/volume/connectors'):
        assert client.get(path, headers=OLD).status_code == 404, path
    assert 'volume' in client.get('/v1', headers=V).get_json()
    assert 'volume' not in client.get('/v1', headers=OLD).get_json()


def test_connector_create_get_patch_delete(client, db):
    node = _node(db)
    connector = _connector(client, node, extra={'a': 1})
    assert connector['node_uuid'] == node.uuid
    assert connector['type'] == 'iqn' and connector['connector_id'] == IQN
    assert connector['links'][0]['href'].endswith(
        '/v1/volume/connectors/' + connector['uuid'])
    one = '/v1/volume/connectors/' + connector['uuid']
    assert client.get(one, headers=V).get_json() == connector
    some = client.get(one + '?fields=uuid,extra', headers=V).get_json()
    assert set(some) == {'uuid', 'extra', 'links'}
    response = client.patch(one, headers=V, json=[
        {'op': 'add', 'path': '/extra/answer', 'value': 42}])
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()['extra'] == {'a': 1, 'answer': 42}
    # Type and connector ID are unique together.
    other = _node(db)
    response = client.post('/v1/volume/connectors', headers=V, json={
        'node_uuid': other.uuid, 'type': 'iqn', 'connector_id': IQN})
    assert response.status_code == 409
    assert _fault(response) == (
        'A volume connector with type iqn and connector ID %s already '
        'exists.' % IQN)
    second = _connector(client, other, connector_id='iqn.other')
    response = client.patch('/v1/volume/connectors/' + second['uuid'],
                            headers=V, json=[{'op': 'replace',
                                              'path': '/connector_id',
                                              'value': IQN}])
    assert response.status_code == 409
    assert client.delete(one, headers=V).status_code == 204
    response = client.get(one, headers=V)
    assert response.status_code == 404
    assert _fault(response) == (
        'Volume connector %s could not be found.' % connector['uuid'])


def test_create_refuses_bad_bodies(client, db):
    node = _node(db)
    for body in ({'type': 'iqn', 'connector_id': IQN},
                 {'node_uuid': node.uuid, 'type': 'x' * 33,
                  'connector_id': IQN},
                 {'node_uuid': node.uuid, 'type': 'iqn',
                  'connector_id': IQN, 'bogus': 1},
                 {'node_uuid': 'nope', 'type': 'iqn', 'connector_id': IQN},
                 {'node_uuid': node.uuid, 'type': 'iqn', 'connector_id': IQN,
                  'uuid': 'nope'}):
        response = client.post('/v1/volume/connectors', headers=V, json=body)
        assert response.status_code == 400, body
    response = client.post('/v1/volume/connectors', headers=V, json={
        'node_uuid': MISSING, 'type': 'iqn', 'connector_id': IQN})
    assert response.status_code == 400
    assert MISSING in _fault(response)
    response = client.post('/v1/volume/targets', headers=V, json={
        'node_uuid': node.uuid, 'volume_type': 'iscsi', 'boot_index': -1,
        'volume_id': VOLUME})
    assert response.status_code == 400


def test_target_boot_index_properties_and_patch(client, db):
    node = _node(db)
    target = _target(client, node, properties={
        'auth_password': 'secret', 'target_iqn': 'iqn.x'})
    # Passwords never shown.
    assert target['properties'] == {'auth_password': '******',
                                    'target_iqn': 'iqn.x'}
    assert target['boot_index'] == 0 and target['volume_id'] == VOLUME
    response = client.post('/v1/volume/targets', headers=V, json={
        'node_uuid': node.uuid, 'volume_type': 'iscsi', 'boot_index': 0,
        'volume_id': MISSING})
    assert response.status_code == 409
    assert _fault(response) == ("A volume target with boot index '0' for "
                                "the same node already exists.")
    second = _target(client, node, boot_index=1, volume_id=MISSING)
    one = '/v1/volume/targets/' + second['uuid']
    response = client.patch(one, headers=V, json=[
        {'op': 'replace', 'path': '/boot_index', 'value': 0}])
    assert response.status_code == 409
    response = client.patch(one, headers=V, json=[
        {'op': 'replace', 'path': '/boot_index', 'value': 5},
        {'op': 'add', 'path': '/properties/lun', 'value': 1}])
    assert response.status_code == 200
    assert response.get_json()['boot_index'] == 5
    assert response.get_json()['properties'] == {'lun': 1}
    response = client.patch(one, headers=V, json=[
        {'op': 'replace', 'path': '/uuid', 'value': MISSING}])
    assert response.status_code == 400
    # The patch applies to the stored password; an echoed mask keeps it.
    first = '/v1/volume/targets/' + target['uuid']
    response = client.patch(first, headers=V, json=[
        {'op': 'replace', 'path': '/properties',
         'value': {'auth_password': '******', 'target_iqn': 'iqn.y'}}])
    assert response.status_code == 200, response.get_data(as_text=True)
    stored = target_obj.VolumeTarget.get(db, target['uuid']).properties
    assert stored == {'auth_password': 'secret', 'target_iqn': 'iqn.y'}
    response = client.patch(first, headers=V, json=[
        {'op': 'add', 'path': '/properties/lun', 'value': 2}])
    assert response.status_code == 200
    assert target_obj.VolumeTarget.get(
        db, target['uuid']).properties['auth_password'] == 'secret'


def test_changes_need_the_node_powered_off(client, db):
    node = _node(db)
    connector = _connector(client, node)
    target = _target(client, node)
    node.power_state = states.POWER_ON
    node.provision_state = states.AVAILABLE
    node.save()
    for path in ('/v1/volume/connectors/' + connector['uuid'],
                 '/v1/volume/targets/' + target['uuid']):
        response = client.patch(path, headers=V, json=[
            {'op': 'add', 'path': '/extra/x', 'value': 1}])
        assert response.status_code == 400
        assert 'update' in _fault(response)
        assert 'power on' in _fault(response)
        response = client.delete(path, headers=V)
        assert response.status_code == 400
        assert 'deletion' in _fault(response)
    # Creating is allowed in every state, as in Ironic.
    _connector(client, node, connector_id='iqn.more')
    # A manageable node may lose them whatever its power state.
    node.provision_state = states.MANAGEABLE
    node.save()
    assert client.delete('/v1/volume/targets/' + target['uuid'],
                         headers=V).status_code == 204


def test_move_to_another_node(client, db):
    node, other = _node(db), _node(db, name='other')
    connector = _connector(client, node)
    one = '/v1/volume/connectors/' + connector['uuid']
    response = client.patch(one, headers=V, json=[
        {'op': 'replace', 'path': '/node_uuid', 'value': MISSING}])
    assert response.status_code == 400
    assert 'Requested value was invalid' in _fault(response)
    response = client.patch(one, headers=V, json=[
        {'op': 'replace', 'path': '/node_uuid', 'value': other.uuid}])
    assert response.status_code == 200
    assert response.get_json()['node_uuid'] == other.uuid
    listed = client.get('/v1/nodes/other/volume/connectors',
                        headers=V).get_json()['connectors']
    assert [c['uuid'] for c in listed] == [connector['uuid']]


@pytest.mark.parametrize('kind', ['connectors', 'targets'])
def test_lists_filters_fields_and_paging(client, db, kind):
    first, second = _node(db, name='first'), _node(db, name='second')
    make = _connector if kind == 'connectors' else _target
    made = [make(client, first, 'iqn.a') if kind == 'connectors'
            else make(client, first, 0),
            make(client, second, 'iqn.b') if kind == 'connectors'
            else make(client, second, 0),
            make(client, second, 'iqn.c') if kind == 'connectors'
            else make(client, second, 1)]
    base = '/v1/volume/' + kind
    listed = client.get(base, headers=V).get_json()[kind]
    assert [r['uuid'] for r in listed] == [r['uuid'] for r in made]
    assert 'extra' not in listed[0] and 'links' in listed[0]
    by_node = client.get(base + '?node=second', headers=V).get_json()[kind]
    assert [r['uuid'] for r in by_node] == [r['uuid'] for r in made[1:]]
    nested = client.get('/v1/nodes/first/volume/' + kind,
                        headers=V).get_json()[kind]
    assert [r['uuid'] for r in nested] == [made[0]['uuid']]
    detail = client.get(base + '?detail=true', headers=V).get_json()[kind]
    assert 'extra' in detail[0] and 'created_at' in detail[0]
    # detail comes with the volume API (1.32), not 1.43.
    at32 = {'X-OpenStack-Ironic-API-Version': '1.32'}
    assert client.get(base + '?detail=true', headers=at32).status_code == 200
    fields = client.get(base + '?fields=uuid,node_uuid',
                        headers=V).get_json()[kind]
    assert set(fields[0]) == {'uuid', 'node_uuid', 'links'}
    assert client.get(base + '?fields=uuid&detail=true',
                      headers=V).status_code == 400
    page = client.get(base + '?limit=2', headers=V).get_json()
    assert len(page[kind]) == 2 and 'next' in page
    rest = client.get(base + '?limit=2&marker=' + made[1]['uuid'],
                      headers=V).get_json()
    assert [r['uuid'] for r in rest[kind]] == [made[2]['uuid']]
    assert client.get(base + '?sort_key=extra', headers=V).status_code == 400
    assert client.get(base + '?node=nobody', headers=V).status_code == 404
    assert client.get('/v1/nodes/nobody/volume/' + kind,
                      headers=V).status_code == 404


def test_node_deletion_deletes_them(client, db):
    node = _node(db)
    connector = _connector(client, node)
    target = _target(client, node)
    assert client.delete('/v1/nodes/' + node.uuid,
                         headers=V).status_code == 204
    assert client.get('/v1/volume/connectors/' + connector['uuid'],
                      headers=V).status_code == 404
    assert client.get('/v1/volume/targets/' + target['uuid'],
                      headers=V).status_code == 404
