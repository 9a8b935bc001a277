# SPDX-License-Identifier: Apache-2.0
"""Ports through the API: create, list, get, PATCH, delete, a node's ports."""

import json
import urllib.parse

import pytest

from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
MAC = '52:54:00:12:34:56'
MISSING = '8d6f8a3e-4d1c-4b51-9b0e-6b7b0b7b0b7b'


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


def _node(db, **values):
    values.setdefault('driver', 'fake-hardware')
    return node_obj.Node.create(db, values)


def _create(client, node, address=MAC, **values):
    values.update(address=address, node_uuid=node.uuid)
    response = client.post('/v1/ports', json=values, headers=V)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def _patch(client, uuid, *ops, headers=V):
    return client.patch('/v1/ports/' + uuid, json=list(ops), headers=headers)


def _addresses(response):
    assert response.status_code == 200, response.get_data(as_text=True)
    return [p['address'] for p in response.get_json()['ports']]


def test_create_get_and_delete(client, db):
    node = _node(db, name='n1')
    response = client.post('/v1/ports', headers=V, json={
        'address': '52:54:00:AB:CD:EF', 'node_uuid': node.uuid,
        'extra': {'rack': 4}, 'physical_network': 'physnet1',
        'local_link_connection': {'switch_id': 'AA:BB:CC:DD:EE:FF',
                                  'port_id': 'Gig0/1'}})
    assert response.status_code == 201
    port = response.get_json()
    assert response.headers['Location'].endswith('/v1/ports/' + port['uuid'])
    assert port['address'] == '52:54:00:ab:cd:ef'
    assert port['node_uuid'] == node.uuid
    assert port['local_link_connection']['switch_id'] == 'aa:bb:cc:dd:ee:ff'
    assert port['pxe_enabled'] is True and port['is_smartnic'] is False
    assert port['internal_info'] == {} and port['portgroup_uuid'] is None
    assert port['created_at'].endswith('+00:00')
    assert port['updated_at'] is None
    assert port['links'][0]['href'].endswith('/v1/ports/' + port['uuid'])

    shown = client.get('/v1/ports/' + port['uuid'], headers=V).get_json()
    assert shown == port
    assert client.delete('/v1/ports/' + port['uuid'],
                         headers=V).status_code == 204
    response = client.get('/v1/ports/' + port['uuid'], headers=V)
    assert response.status_code == 404
    assert port['uuid'] in _fault(response)


def test_create_with_given_uuid_and_conflicts(client, db):
    node = _node(db)
    uuid = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'
    assert _create(client, node, uuid=uuid)['uuid'] == uuid
    response = client.post('/v1/ports', headers=V, json={
        'address': MAC.upper(), 'node_uuid': node.uuid})
    assert response.status_code == 409
    assert MAC in _fault(response)
    response = client.post('/v1/ports', headers=V, json={
        'address': '52:54:00:00:00:01', 'node_uuid': node.uuid,
        'uuid': uuid})
    assert response.status_code == 409
    assert uuid in _fault(response)


@pytest.mark.parametrize('address', [
    '52:54:00:12:34', '52-54-00-12-34-56', '5254.0012.3456',
    '525400123456', '52:54:00:12:34:5g', '52:54:00:12:34:56:78', ''])
def test_create_rejects_a_bad_mac(client, db, address):
    response = client.post('/v1/ports', headers=V, json={
        'address': address, 'node_uuid': _node(db).uuid})
    assert response.status_code == 400
    assert 'Expected a MAC address' in _fault(response)
    assert '52:54:00:12:34:56' in _fault(response)


@pytest.mark.parametrize('extra, words', [
    ({'colour': 'red'}, "'colour' was unexpected"),
    ({'node_uuid': None}, 'node_uuid'),
    ({'extra': []}, 'extra'),
    ({'pxe_enabled': 'maybe'}, 'pxe_enabled must be true or false'),
    ({'node_uuid': 'n1'}, 'node_uuid must be a UUID, not "n1"'),
    ({'uuid': 'x'}, 'uuid must be a UUID'),
    ({'portgroup_uuid': MISSING}, 'Portgroup %s could not be found' % MISSING),
    ({'local_link_connection': {'switch_id': 'x', 'port_id': 'p'}},
     'switch_id'),
    ({'local_link_connection': {'port_id': 'p'}}, 'needs switch_id'),
    ({'local_link_connection': {'port_id': 'p', 'colour': 'red'}},
     'colour'),
    ({'is_smartnic': True}, 'Smart NIC'),
])
def test_create_rejects_bad_input_with_a_clear_400(client, db, extra, words):
    values = {'address': MAC, 'node_uuid': _node(db).uuid}
    values.update(extra)
    response = client.post('/v1/ports', json=values, headers=V)
    assert response.status_code == 400
    assert words in _fault(response)


def test_create_needs_an_existing_node_and_a_body(client):
    response = client.post('/v1/ports', headers=V, json={
        'address': MAC, 'node_uuid': MISSING})
    assert response.status_code == 400
    assert MISSING in _fault(response)
    response = client.post('/v1/ports', headers=V, json={'address': MAC})
    assert response.status_code == 400
    assert "'node_uuid' is a required property" in _fault(response)
    response = client.post('/v1/ports', headers=V, json=[MAC])
    assert response.status_code == 400
    assert 'is not of type' in _fault(response)


def test_smartnic_and_unmanaged_links(client, db):
    node = _node(db)
    port = _create(client, node, is_smartnic=True, local_link_connection={
        'port_id': 'rep0-0', 'hostname': 'host1-bf'})
    assert port['is_smartnic'] is True
    port = _create(client, node, '52:54:00:00:00:02',
                   local_link_connection={'network_type': 'unmanaged'})
    assert port['local_link_connection'] == {'network_type': 'unmanaged'}
    response = client.post('/v1/ports', json={
        'address': '52:54:00:00:00:03', 'node_uuid': node.uuid,
        'local_link_connection': {'network_type': 'unmanaged'}},
        headers={'X-OpenStack-Ironic-API-Version': '1.63'})
    assert response.status_code == 406
    assert 'network_type' in _fault(response)


def test_fields_follow_the_microversion(client, db):
    uuid = _create(client, _node(db), is_smartnic=False)['uuid']
    old = client.get('/v1/ports/' + uuid, headers={
        'X-OpenStack-Ironic-API-Version': '1.52'}).get_json()
    assert 'physical_network' in old and 'is_smartnic' not in old
    older = client.get('/v1/ports/' + uuid, headers={
        'X-OpenStack-Ironic-API-Version': '1.18'}).get_json()
    assert 'internal_info' in older and 'pxe_enabled' not in older
    response = client.get('/v1/ports/%s?fields=is_smartnic' % uuid, headers={
        'X-OpenStack-Ironic-API-Version': '1.52'})
    assert response.status_code == 400
    assert 'is_smartnic' in _fault(response)
    response = client.post('/v1/ports', json={
        'address': '52:54:00:00:00:09', 'node_uuid': _node(db).uuid,
        'is_smartnic': False},
        headers={'X-OpenStack-Ironic-API-Version': '1.52'})
    assert response.status_code == 406
    assert '1.53' in _fault(response)


def test_get_with_fields_and_unknown_ports(client, db):
    uuid = _create(client, _node(db))['uuid']
    response = client.get('/v1/ports/%s?fields=uuid,node_uuid' % uuid,
                          headers=V)
    assert set(response.get_json()) == {'uuid', 'node_uuid'}
    for ident in (MISSING, 'not-a-uuid'):
        response = client.get('/v1/ports/' + ident, headers=V)
        assert response.status_code == 404
        assert ident in _fault(response)
    assert client.delete('/v1/ports/' + MISSING,
                         headers=V).status_code == 404
    assert _patch(client, MISSING, {'op': 'replace', 'path': '/extra',
                                    'value': {}}).status_code == 404


def test_list_shows_summaries_detail_and_fields(client, db):
    node = _node(db)
    _create(client, node)
    summary = client.get('/v1/ports', headers=V).get_json()['ports']
    assert [sorted(p) for p in summary] == [['address', 'links', 'uuid']]
    detail = client.get('/v1/ports/detail', headers=V).get_json()['ports']
    assert detail[0]['node_uuid'] == node.uuid
    assert 'is_smartnic' in detail[0]
    assert client.get('/v1/ports?detail=true',
                      headers=V).get_json()['ports'] == detail
    response = client.get('/v1/ports?detail=true', headers={
        'X-OpenStack-Ironic-API-Version': '1.42'})
    assert response.status_code == 406
    fields = client.get('/v1/ports?fields=address,pxe_enabled',
                        headers=V).get_json()['ports']
    assert fields == [{'address': MAC, 'pxe_enabled': True}]
    response = client.get('/v1/ports?fields=address&detail=true', headers=V)
    assert response.status_code == 400


def test_list_filters_by_node_and_address(client, db):
    n1, n2 = _node(db, name='n1'), _node(db, name='n2')
    _create(client, n1, '52:54:00:00:01:01')
    _create(client, n1, '52:54:00:00:01:02')
    _create(client, n2, '52:54:00:00:02:01')
    assert _addresses(client.get('/v1/ports?node=n1', headers=V)) == [
        '52:54:00:00:01:01', '52:54:00:00:01:02']
    assert _addresses(client.get('/v1/ports?node=' + n2.uuid,
                                 headers=V)) == ['52:54:00:00:02:01']
    assert _addresses(client.get('/v1/ports?node_uuid=' + n2.uuid,
                                 headers=V)) == ['52:54:00:00:02:01']
    assert _addresses(client.get('/v1/ports/detail?address=52:54:00:00:01:02',
                                 headers=V)) == ['52:54:00:00:01:02']
    assert _addresses(client.get(
        '/v1/ports?node=n2&address=52:54:00:00:01:02', headers=V)) == []
    assert _addresses(client.get('/v1/nodes/n1/ports', headers=V)) == [
        '52:54:00:00:01:01', '52:54:00:00:01:02']
    detail = client.get('/v1/nodes/%s/ports/detail' % n2.uuid,
                        headers=V).get_json()['ports']
    assert [p['node_uuid'] for p in detail] == [n2.uuid]
    assert client.get('/v1/nodes/nope/ports', headers=V).status_code == 404
    assert client.get('/v1/ports?node=nope', headers=V).status_code == 404
    response = client.get('/v1/ports?node_uuid=n1', headers=V)
    assert response.status_code == 400
    response = client.get('/v1/ports?address=5254', headers=V)
    assert response.status_code == 400
    assert 'MAC address' in _fault(response)
    response = client.get('/v1/ports?portgroup=pg1', headers=V)
    assert response.status_code == 404
    assert 'Portgroup pg1 could not be found' in _fault(response)


def test_paging_follows_next_links(client, db):
    node = _node(db)
    made = [_create(client, node, '52:54:00:00:00:%02x' % i)['address']
            for i in range(5)]
    seen, url = [], '/v1/ports?limit=2&sort_key=address&sort_dir=desc'
    while url:
        body = client.get(url, headers=V).get_json()
        seen.extend(p['address'] for p in body['ports'])
        url = body.get('next')
        if url:
            parsed = urllib.parse.urlsplit(url)
            assert parsed.path == '/v1/ports'
            assert 'sort_key=address' in parsed.query
            url = parsed.path + '?' + parsed.query
    assert seen == sorted(made, reverse=True)
    body = client.get('/v1/nodes/%s/ports/detail?limit=4' % node.uuid,
                      headers=V).get_json()
    assert len(body['ports']) == 4
    assert '/v1/nodes/%s/ports/detail?' % node.uuid in body['next']
    response = client.get('/v1/ports?sort_key=extra', headers=V)
    assert response.status_code == 400
    response = client.get('/v1/ports?sort_key=is_smartnic', headers={
        'X-OpenStack-Ironic-API-Version': '1.52'})
    assert response.status_code == 406
    response = client.get('/v1/ports?marker=' + MISSING, headers=V)
    assert response.status_code == 404


def test_patch_updates_fields_and_moves_the_port(client, db):
    n1, n2 = _node(db), _node(db)
    uuid = _create(client, n1, extra={'a': 1})['uuid']
    response = _patch(
        client, uuid,
        {'op': 'replace', 'path': '/address', 'value': '52:54:00:FF:FF:FF'},
        {'op': 'add', 'path': '/extra/b', 'value': 2},
        {'op': 'remove', 'path': '/extra/a'},
        {'op': 'replace', 'path': '/pxe_enabled', 'value': False},
        {'op': 'replace', 'path': '/node_uuid', 'value': n2.uuid})
    assert response.status_code == 200, response.get_data(as_text=True)
    port = response.get_json()
    assert port['address'] == '52:54:00:ff:ff:ff'
    assert port['extra'] == {'b': 2} and port['pxe_enabled'] is False
    assert port['node_uuid'] == n2.uuid and port['updated_at'] is not None
    stored = port_obj.Port.get(db, uuid)
    assert stored.node_id == n2.id and stored.address == '52:54:00:ff:ff:ff'
    port = _patch(client, uuid, {'op': 'remove', 'path': '/extra'},
                  {'op': 'remove', 'path': '/pxe_enabled'}).get_json()
    assert port['extra'] == {} and port['pxe_enabled'] is True


def test_booleans_may_be_strings_as_ironicclient_sends_them(client, db):
    node = _node(db)
    port = _create(client, node, pxe_enabled='false')
    assert port['pxe_enabled'] is False
    port = _patch(client, port['uuid'], {'op': 'add', 'path': '/pxe_enabled',
                                         'value': 'True'}).get_json()
    assert port['pxe_enabled'] is True
    assert port_obj.Port.get(db, port['uuid']).pxe_enabled is True


@pytest.mark.parametrize('ops, status, words', [
    ([{'op': 'replace', 'path': '/uuid', 'value': MISSING}], 400,
     'read-only'),
    ([{'op': 'replace', 'path': '/created_at', 'value': 'x'}], 400,
     'read-only'),
    ([{'op': 'remove', 'path': '/address'}], 400, 'mandatory'),
    ([{'op': 'replace', 'path': '/address', 'value': 'nope'}], 400,
     'Expected a MAC address'),
    ([{'op': 'replace', 'path': '/node_uuid', 'value': MISSING}], 400,
     MISSING),
    ([{'op': 'add', 'path': '/colour', 'value': 'red'}], 400, '/colour'),
    ([{'op': 'move', 'path': '/extra'}], 400, 'JSON Patch'),
    ({'op': 'replace'}, 400, 'JSON Patch'),
    ('[{"op": "remove",', 400, 'not valid JSON'),
    ([{'op': 'replace', 'path': '/portgroup_uuid', 'value': MISSING}], 400,
     'could not be found'),
    ([{'op': 'replace', 'path': '/is_smartnic', 'value': True}], 400,
     'Smart NIC'),
])
def test_patch_rejects_bad_changes(client, db, ops, status, words):
    uuid = _create(client, _node(db))['uuid']
    if isinstance(ops, list):
        response = _patch(client, uuid, *ops)
    elif isinstance(ops, str):
        response = client.patch('/v1/ports/' + uuid, data=ops, headers=V,
                                content_type='application/json')
    else:
        response = client.patch('/v1/ports/' + uuid, json=ops, headers=V)
    assert response.status_code == status
    assert words in _fault(response)
    assert port_obj.Port.get(db, uuid).address == MAC


def test_patch_of_a_hidden_field_needs_its_version(client, db):
    uuid = _create(client, _node(db))['uuid']
    response = _patch(client, uuid, {'op': 'replace', 'path': '/is_smartnic',
                                     'value': False},
                      headers={'X-OpenStack-Ironic-API-Version': '1.52'})
    assert response.status_code == 406
    assert 'is_smartnic' in _fault(response)


def test_active_node_refuses_address_and_connectivity_changes(client, db):
    node = _node(db, provision_state='active')
    uuid = _create(client, node)['uuid']
    response = _patch(client, uuid, {'op': 'replace', 'path': '/address',
                                     'value': '52:54:00:00:00:aa'})
    assert response.status_code == 409
    assert node.uuid in _fault(response)
    response = _patch(client, uuid, {'op': 'replace', 'path': '/pxe_enabled',
                                     'value': False})
    assert response.status_code == 409
    assert 'pxe_enabled' in _fault(response)
    other = _node(db)
    response = _patch(client, uuid, {'op': 'replace', 'path': '/node_uuid',
                                     'value': other.uuid})
    assert response.status_code == 409
    # Same address in another spelling, and extra: not a network change.
    response = _patch(client, uuid,
                      {'op': 'replace', 'path': '/address',
                       'value': MAC.upper()},
                      {'op': 'add', 'path': '/extra/note', 'value': 'ok'})
    assert response.status_code == 200
    assert port_obj.Port.get(db, uuid).address == MAC
    node.maintenance = True
    node.save()
    response = _patch(client, uuid, {'op': 'replace', 'path': '/address',
                                     'value': '52:54:00:00:00:aa'})
    assert response.status_code == 200
    assert client.delete('/v1/ports/' + uuid, headers=V).status_code == 204


def test_inspecting_node_refuses_every_port_change(client, db):
    node = _node(db)
    uuid = _create(client, node)['uuid']
    node.provision_state = 'inspecting'
    node.save()
    response = _patch(client, uuid, {'op': 'add', 'path': '/extra/a',
                                     'value': 1})
    assert response.status_code == 409
    assert 'inspecting' in _fault(response)


def test_patch_to_a_duplicate_mac_conflicts(client, db):
    node = _node(db)
    _create(client, node, '52:54:00:00:00:01')
    uuid = _create(client, node, '52:54:00:00:00:02')['uuid']
    response = _patch(client, uuid, {'op': 'replace', 'path': '/address',
                                     'value': '52:54:00:00:00:01'})
    assert response.status_code == 409
    assert '52:54:00:00:00:01' in _fault(response)


def test_deleting_the_node_deletes_its_ports(client, db):
    node = _node(db)
    uuid = _create(client, node)['uuid']
    node.destroy()
    assert client.get('/v1/ports/' + uuid, headers=V).status_code == 404
    assert client.get('/v1/ports', headers=V).get_json()['ports'] == []
