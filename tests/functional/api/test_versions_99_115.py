# SPDX-License-Identifier: Apache-2.0
"""Versions 1.99 to 1.115: what each brings, served or refused as Ironic.
(Port and port group fields, 1.99-1.103 and 1.111, have their own
tests; aborting a deploy wait, 1.110: test_direct_deploy.py.)"""

from ferrum.api import microversion
from tests.functional.api import versions
from tests.polling import wait_for

_v = versions.v


def _node(client, minor=115, **values):
    return versions.node(client, minor, **values)


def _patch(client, ident, operations, minor=115):
    response = client.patch('/v1/nodes/%s' % ident, headers=_v(minor),
                            json=operations)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def test_the_maximum_is_1_115(client):
    assert microversion.MAX_VERSION == (1, 115)
    response = client.get('/v1', headers={
        'X-OpenStack-Ironic-API-Version': 'latest'})
    assert response.headers['X-OpenStack-Ironic-API-Version'] == '1.115'
    assert response.headers[
        'X-OpenStack-Ironic-API-Maximum-Version'] == '1.115'


def test_instance_name_and_its_filter_from_1_104(client):
    named = _node(client)
    other = _node(client)
    assert named['instance_name'] is None
    assert 'instance_name' not in client.get(
        '/v1/nodes/%s' % named['uuid'], headers=_v(103)).get_json()
    body = _patch(client, named['uuid'], [
        {'op': 'add', 'path': '/instance_name', 'value': 'web-1'}])
    assert body['instance_name'] == 'web-1'
    found = client.get('/v1/nodes?instance_name=web-1',
                       headers=_v(104)).get_json()['nodes']
    assert [n['uuid'] for n in found] == [named['uuid']]
    assert client.get('/v1/nodes?instance_name=web-1',
                      headers=_v(103)).status_code == 406
    # As Ironic: nova's display_name names an unnamed instance.
    body = _patch(client, other['uuid'], [
        {'op': 'add', 'path': '/instance_info/display_name',
         'value': 'db-1'}])
    assert body['instance_name'] == 'db-1'
    body = _patch(client, named['uuid'], [
        {'op': 'add', 'path': '/instance_info/display_name',
         'value': 'ignored'}])
    assert body['instance_name'] == 'web-1'
    body = _patch(client, named['uuid'], [
        {'op': 'remove', 'path': '/instance_name'}])
    assert body['instance_name'] is None


def test_request_ids_on_every_answer(client):
    first = client.get('/v1', headers=_v(107))
    again = client.get('/v1/nodes/nope', headers=_v(1))
    for response in (first, again):
        request_id = response.headers['X-OpenStack-Request-Id']
        assert request_id.startswith('req-')
        assert response.headers['OpenStack-Request-Id'] == request_id
    assert (first.headers['X-OpenStack-Request-Id']
            != again.headers['X-OpenStack-Request-Id'])


def test_health_from_1_109(client):
    uuid = _node(client)['uuid']
    assert client.get('/v1/nodes/%s' % uuid,
                      headers=_v(109)).get_json()['health'] is None
    assert 'health' not in client.get('/v1/nodes/%s' % uuid,
                                      headers=_v(108)).get_json()


def test_history_project_and_state_fields(client):
    uuid = _node(client)['uuid']
    response = client.put('/v1/nodes/%s/states/provision' % uuid,
                          headers=_v(115), json={'target': 'manage'})
    assert response.status_code == 202

    def transitions(minor):
        entries = client.get('/v1/nodes/%s/history?detail=true' % uuid,
                             headers=_v(minor)).get_json()['history']
        return [e for e in entries if e['event_type'] == 'transition']
    entry = wait_for(lambda: next(
        (e for e in transitions(115) if e['state'] == 'manageable'), None),
        timeout=30, what='the transition to manageable')
    assert 'project' in entry
    assert entry['target_provision_state'] is None
    assert isinstance(entry['duration_seconds'], int)
    older = transitions(114)[-1]
    assert 'project' in older and 'state' not in older
    oldest = transitions(112)[-1]
    assert 'project' not in oldest


def test_port_groups_of_shards_from_1_106(client):
    east = _node(client)['uuid']
    west = _node(client)['uuid']
    _patch(client, east, [{'op': 'add', 'path': '/shard', 'value': 'east'}])
    for index, node in enumerate((east, west)):
        response = client.post('/v1/portgroups', headers=_v(115), json={
            'node_uuid': node, 'address': '52:54:00:00:03:%02d' % index})
        assert response.status_code == 201, response.get_data(as_text=True)
    groups = client.get('/v1/portgroups?shard=east,north&fields=node_uuid',
                        headers=_v(106)).get_json()['portgroups']
    assert [group['node_uuid'] for group in groups] == [east]
    assert client.get('/v1/portgroups?shard=east',
                      headers=_v(105)).status_code == 406
    # As Ironic: one of node, address and shard at a time.
    response = client.get('/v1/portgroups?shard=east&node=%s' % east,
                          headers=_v(106))
    assert response.status_code == 400
