# SPDX-License-Identifier: Apache-2.0
"""Nodes through the API: create, list, get, PATCH and delete."""

import pytest

from ferrum.objects import node as node_obj
from tests.functional.api.nodes import V
from tests.functional.api.nodes import create as _create
from tests.functional.api.nodes import fault as _fault


def test_create_fills_interfaces_and_links(client):
    response = client.post('/v1/nodes', headers=V, json={
        'driver': 'fake-hardware', 'name': 'rack1-n1',
        'resource_class': 'baremetal', 'driver_info': {'fake_password': 'x'}})
    assert response.status_code == 201
    node = response.get_json()
    assert response.headers['Location'].endswith('/v1/nodes/' + node['uuid'])
    assert node['provision_state'] == 'enroll'
    assert node['power_interface'] == 'fake'
    assert node['console_interface'] == 'no-console'
    assert node['driver_info'] == {'fake_password': '******'}
    assert node['conductor'] == 'test-conductor'
    assert node['traits'] == [] and node['allocation_uuid'] is None


@pytest.mark.parametrize('body, words', [
    ({'driver': 'no-such-driver'}, 'no-such-driver'),
    ({'driver': 'fake-hardware', 'colour': 'red'}, "'colour' was unexpected"),
    ({'name': 'x'}, "'driver' is a required property"),
    ({'driver': 'fake-hardware', 'name': 'a b'}, 'at "/name"'),
    ({'driver': 'fake-hardware',
      'name': '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'}, 'look like a UUID'),
    ({'driver': 'fake-hardware', 'power_interface': 'ipmitool'},
     'ipmitool'),
    ({'driver': 'fake-hardware', 'driver_info': []}, 'driver_info'),
])
def test_create_rejects_bad_input_with_a_clear_400(client, body, words):
    response = client.post('/v1/nodes', json=body, headers=V)
    assert response.status_code == 400
    assert words in _fault(response)


def test_create_conflicts_and_version_gates(client):
    _create(client, name='twin')
    response = client.post('/v1/nodes', headers=V,
                           json={'driver': 'fake-hardware', 'name': 'twin'})
    assert response.status_code == 409
    response = client.post('/v1/nodes', json={
        'driver': 'fake-hardware', 'lessee': 'p1'},
        headers={'X-OpenStack-Ironic-API-Version': '1.64'})
    assert response.status_code == 406
    assert '1.65' in _fault(response)
    response = client.post('/v1/nodes', data='{not json', headers=V,
                           content_type='application/json')
    assert response.status_code == 400
    assert 'not valid JSON' in _fault(response)


def test_fields_follow_the_microversion(client):
    uuid = _create(client, owner='p1')['uuid']
    old = client.get('/v1/nodes/' + uuid, headers={
        'X-OpenStack-Ironic-API-Version': '1.30'}).get_json()
    assert 'resource_class' in old and 'owner' not in old
    assert 'power_interface' not in old
    assert client.get('/v1/nodes/' + uuid, headers=V).get_json()[
        'owner'] == 'p1'
    picked = client.get('/v1/nodes/%s?fields=uuid,owner' % uuid,
                        headers=V).get_json()
    assert picked.pop('links')[0]['href'].endswith(uuid)
    assert picked == {'uuid': uuid, 'owner': 'p1'}
    response = client.get('/v1/nodes/%s?fields=owner' % uuid, headers={
        'X-OpenStack-Ironic-API-Version': '1.49'})
    assert response.status_code == 400 and 'owner' in _fault(response)


def test_list_filters(client, db):
    a = _create(client, name='a', resource_class='gold', owner='o1')
    b = _create(client, name='b', resource_class='iron', lessee='l1',
                conductor_group='Rack-1')
    node_obj.Node.get(db, b['uuid']).save(
        maintenance=True, fault='power failure',
        instance_uuid='9d7d1d48-70d2-4f8c-a5b2-6a1c1d0ab7a1')

    def names(query):
        response = client.get('/v1/nodes?' + query, headers=V)
        assert response.status_code == 200, response.get_data(as_text=True)
        return sorted(n['name'] for n in response.get_json()['nodes'])

    assert names('') == ['a', 'b']
    assert names('resource_class=gold') == ['a']
    assert names('maintenance=true') == ['b']
    assert names('associated=false') == ['a']
    assert names('instance_uuid=9d7d1d48-70d2-4f8c-a5b2-6a1c1d0ab7a1') == [
        'b']
    assert names('conductor_group=rack-1') == ['b']
    assert names('owner=o1') == ['a'] and names('lessee=l1') == ['b']
    assert names('fault=power%20failure') == ['b']
    assert names('driver=fake-hardware&provision_state=enroll') == ['a', 'b']
    assert a['uuid'] != b['uuid']
    response = client.get('/v1/nodes?maintenance=perhaps', headers=V)
    assert response.status_code == 400 and 'maintenance' in _fault(response)
    response = client.get('/v1/nodes?lessee=x', headers={
        'X-OpenStack-Ironic-API-Version': '1.64'})
    assert response.status_code == 406


def test_paging_sorting_and_next_links(client):
    created = [_create(client, name='n%02d' % i)['uuid'] for i in range(5)]
    seen, url = [], '/v1/nodes?limit=2&sort_key=name&sort_dir=desc'
    while url:
        body = client.get(url, headers=V).get_json()
        seen += [n['uuid'] for n in body['nodes']]
        url = body.get('next', '').replace('http://localhost', '')
    assert seen == list(reversed(created))
    detail = client.get('/v1/nodes/detail?limit=1', headers=V).get_json()
    assert 'driver_info' in detail['nodes'][0] and 'next' in detail
    for query, word in [('sort_key=driver_info', 'sort_key'),
                        ('sort_dir=sideways', 'sort direction'),
                        ('limit=-1', 'limit'), ('marker=bogus', 'marker')]:
        response = client.get('/v1/nodes?' + query, headers=V)
        assert response.status_code == 400 and word in _fault(response)
    assert client.get('/v1/nodes?detail=true', headers=V).get_json()[
        'nodes'][0]['driver'] == 'fake-hardware'


def test_patch_updates_and_refuses_read_only_fields(client):
    uuid = _create(client, driver_info={'fake_password': 'p', 'x': 1})['uuid']
    response = client.patch('/v1/nodes/' + uuid, headers=V, json=[
        {'op': 'add', 'path': '/extra/rack', 'value': 'r1'},
        {'op': 'replace', 'path': '/name', 'value': 'renamed'},
        {'op': 'replace', 'path': '/driver_info',
         'value': {'fake_password': '******', 'x': 2}}])
    assert response.status_code == 200, response.get_data(as_text=True)
    node = response.get_json()
    assert node['name'] == 'renamed' and node['extra'] == {'rack': 'r1'}
    assert node['driver_info'] == {'fake_password': '******', 'x': 2}
    stored = client.application.config['FERRUM_DB']
    assert node_obj.Node.get(stored, uuid).driver_info['fake_password'] == 'p'
    for patch, code, words in [
        ([{'op': 'replace', 'path': '/provision_state', 'value': 'active'}],
         400, "'/provision_state' is a read-only"),
        ([{'op': 'add', 'path': '/colour', 'value': 'red'}], 400,
         'root of the resource'),
        ([{'op': 'remove', 'path': '/extra/nothing'}], 400, 'cannot be'),
        ([{'op': 'move', 'path': '/name'}], 400, 'JSON Patch'),
        ({'op': 'replace'}, 400, 'JSON Patch'),
        ([{'op': 'replace', 'path': '/power_interface', 'value': 'nope'}],
         400, 'nope'),
        ([{'op': 'replace', 'path': '/automated_clean', 'value': 'maybe'}],
         400, 'automated_clean'),
    ]:
        response = client.patch('/v1/nodes/' + uuid, json=patch, headers=V)
        assert response.status_code == code, patch
        assert words in _fault(response), _fault(response)


def test_patch_driver_change_needs_a_quiet_node(client, conductor, db):
    from tests.functional.conductor.flows import to_state
    uuid = _create(client)['uuid']
    node = to_state(conductor.manager, db, node_obj.Node.get(db, uuid),
                    'active')
    response = client.patch('/v1/nodes/' + uuid, headers=V, json=[
        {'op': 'replace', 'path': '/deploy_interface', 'value': 'noop'}])
    assert response.status_code == 409
    assert 'active' in _fault(response)
    assert node.provision_state == 'active'
    response = client.patch('/v1/nodes/%s?reset_interfaces=true' % uuid,
                            headers=V, json=[{'op': 'replace',
                                              'path': '/name', 'value': 'x'}])
    assert response.status_code == 400 and 'reset_interfaces' in _fault(
        response)
