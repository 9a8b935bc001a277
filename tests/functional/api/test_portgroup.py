# SPDX-License-Identifier: Apache-2.0
"""Port groups through the API, and the rules between ports and groups."""

import json
import urllib.parse

import pytest

from ferrum.api import microversion
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj
from ferrum.objects import portgroup as portgroup_obj

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
MAC = '52:54:00:aa:00:01'
MISSING = '8d6f8a3e-4d1c-4b51-9b0e-6b7b0b7b0b7b'


def _version(minor):
    return {'X-OpenStack-Ironic-API-Version': '1.%d' % minor}


def _since(minor):
    """Tests of fields past the maximum run once ferrum serves them."""
    return pytest.mark.skipif(
        microversion.MAX_VERSION < (1, minor),
        reason='ferrum serves up to %s' % microversion.as_string(
            microversion.MAX_VERSION))


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


def _node(db, **values):
    values.setdefault('driver', 'fake-hardware')
    return node_obj.Node.create(db, values)


def _group(client, node, headers=V, **values):
    values['node_uuid'] = node.uuid
    response = client.post('/v1/portgroups', json=values, headers=headers)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def _port(client, node, address, headers=V, **values):
    values.update(address=address, node_uuid=node.uuid)
    response = client.post('/v1/ports', json=values, headers=headers)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def _patch(client, path, *ops, headers=V):
    return client.patch(path, json=list(ops), headers=headers)


def test_create_get_and_delete(client, db):
    node = _node(db)
    response = client.post('/v1/portgroups', headers=V, json={
        'node_uuid': node.uuid, 'name': 'bond0', 'address': MAC.upper(),
        'extra': {'rack': 4}, 'properties': {'miimon': '100'},
        'standalone_ports_supported': 'false'})
    assert response.status_code == 201, response.get_data(as_text=True)
    group = response.get_json()
    assert response.headers['Location'].endswith(
        '/v1/portgroups/' + group['uuid'])
    assert group['address'] == MAC and group['name'] == 'bond0'
    assert group['node_uuid'] == node.uuid
    # [DEFAULT] default_portgroup_mode, Ironic's default.
    assert group['mode'] == 'active-backup'
    assert group['standalone_ports_supported'] is False
    assert group['internal_info'] == {} and group['extra'] == {'rack': 4}
    assert group['ports'][0]['href'].endswith(
        '/v1/portgroups/%s/ports' % group['uuid'])
    assert group['created_at'].endswith('+00:00')
    assert group['updated_at'] is None
    assert 'physical_network' not in group and 'category' not in group
    for ident in (group['uuid'], 'bond0'):
        shown = client.get('/v1/portgroups/' + ident, headers=V)
        assert shown.get_json() == group
    assert client.delete('/v1/portgroups/bond0', headers=V).status_code == 204
    response = client.get('/v1/portgroups/' + group['uuid'], headers=V)
    assert response.status_code == 404
    assert 'Portgroup %s could not be found.' % group['uuid'] == _fault(
        response)


def test_group_without_address_and_mode_from_config(client, db, conf):
    conf.set_override('default_portgroup_mode', '802.3ad')
    group = _group(client, _node(db))
    assert group['address'] is None and group['name'] is None
    assert group['mode'] == '802.3ad'
    assert _group(client, _node(db), mode='balance-rr')['mode'] == \
        'balance-rr'


def test_versions_gate_the_resource_and_its_fields(client, db):
    node = _node(db)
    group = _group(client, node)
    response = client.get('/v1/portgroups', headers=_version(22))
    assert response.status_code == 404
    assert '1.23' in _fault(response)
    old = client.get('/v1/portgroups/' + group['uuid'],
                     headers=_version(25)).get_json()
    assert 'mode' not in old and 'properties' not in old
    response = client.post('/v1/portgroups', headers=_version(25), json={
        'node_uuid': node.uuid, 'mode': '802.3ad'})
    assert response.status_code == 406
    assert '1.26' in _fault(response)
    response = client.get('/v1/portgroups?fields=mode', headers=_version(25))
    assert response.status_code == 400
    # A node's groups and a group's ports come with 1.24.
    assert client.get('/v1/nodes/%s/portgroups' % node.uuid,
                      headers=_version(23)).status_code == 404
    assert client.get('/v1/portgroups/%s/ports' % group['uuid'],
                      headers=_version(23)).status_code == 404
    port = _port(client, node, MAC)
    assert 'portgroup_uuid' not in client.get(
        '/v1/ports/' + port['uuid'], headers=_version(23)).get_json()


def test_a_group_with_two_ports_on_a_node(client, db):
    node, other = _node(db, name='n1'), _node(db)
    group = _group(client, node, name='bond0', address=MAC)
    first = _port(client, node, MAC, portgroup_uuid=group['uuid'])
    second = _port(client, node, '52:54:00:aa:00:02')
    _port(client, other, '52:54:00:aa:00:03')
    assert first['portgroup_uuid'] == group['uuid']
    assert second['portgroup_uuid'] is None
    response = _patch(client, '/v1/ports/' + second['uuid'],
                      {'op': 'add', 'path': '/portgroup_uuid',
                       'value': 'bond0'})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()['portgroup_uuid'] == group['uuid']
    stored = port_obj.Port.get(db, second['uuid'])
    assert stored.portgroup_id == portgroup_obj.Portgroup.get(db, 'bond0').id

    members = client.get('/v1/portgroups/bond0/ports', headers=V).get_json()
    assert sorted(p['address'] for p in members['ports']) == [
        MAC, '52:54:00:aa:00:02']
    detail = client.get('/v1/portgroups/%s/ports/detail' % group['uuid'],
                        headers=V).get_json()['ports']
    assert {p['portgroup_uuid'] for p in detail} == {group['uuid']}
    filtered = client.get('/v1/ports?portgroup=bond0', headers=V).get_json()
    assert len(filtered['ports']) == 2
    response = client.get('/v1/ports?portgroup=bond0&node=n1', headers=V)
    assert response.status_code == 403
    groups = client.get('/v1/nodes/n1/portgroups', headers=V).get_json()
    assert [g['name'] for g in groups['portgroups']] == ['bond0']
    assert client.get('/v1/nodes/%s/portgroups/detail' % other.uuid,
                      headers=V).get_json() == {'portgroups': []}

    # A group with ports is not deleted, nor moved (Ironic's 400s).
    response = client.delete('/v1/portgroups/bond0', headers=V)
    assert response.status_code == 400
    assert 'contains ports' in _fault(response)
    response = _patch(client, '/v1/portgroups/bond0',
                      {'op': 'replace', 'path': '/node_uuid',
                       'value': other.uuid})
    assert response.status_code == 400
    assert 'contains ports' in _fault(response)
    # Leaving the group, then deleting it.
    for port in (first, second):
        response = _patch(client, '/v1/ports/' + port['uuid'],
                          {'op': 'remove', 'path': '/portgroup_uuid'})
        assert response.get_json()['portgroup_uuid'] is None
    assert client.delete('/v1/portgroups/bond0', headers=V).status_code == 204
    # Deleting a node deletes its groups (and ports).
    group = _group(client, other)
    _port(client, other, '52:54:00:aa:00:04', portgroup_uuid=group['uuid'])
    other.destroy()
    assert client.get('/v1/portgroups/' + group['uuid'],
                      headers=V).status_code == 404


def test_port_and_group_must_share_a_node(client, db):
    n1, n2 = _node(db), _node(db)
    group = _group(client, n1)
    response = client.post('/v1/ports', headers=V, json={
        'address': MAC, 'node_uuid': n2.uuid, 'portgroup_uuid': group['uuid']})
    assert response.status_code == 400
    assert 'different node' in _fault(response)
    port = _port(client, n1, MAC, portgroup_uuid=group['uuid'])
    response = _patch(client, '/v1/ports/' + port['uuid'],
                      {'op': 'replace', 'path': '/node_uuid',
                       'value': n2.uuid})
    assert response.status_code == 400
    assert 'different node' in _fault(response)
    response = client.post('/v1/ports', headers=V, json={
        'address': '52:54:00:aa:00:09', 'node_uuid': n1.uuid,
        'portgroup_uuid': MISSING})
    assert response.status_code == 400
    assert MISSING in _fault(response)


def test_groups_without_standalone_ports(client, db):
    node = _node(db)
    group = _group(client, node, standalone_ports_supported=False)
    response = client.post('/v1/ports', headers=V, json={
        'address': MAC, 'node_uuid': node.uuid,
        'portgroup_uuid': group['uuid']})
    assert response.status_code == 409
    assert "doesn't support standalone ports" in _fault(response)
    port = _port(client, node, MAC, pxe_enabled=False,
                 portgroup_uuid=group['uuid'])
    response = _patch(client, '/v1/ports/' + port['uuid'],
                      {'op': 'replace', 'path': '/pxe_enabled',
                       'value': True})
    assert response.status_code == 409
    assert "'pxe_enabled' was set to True" in _fault(response)

    relaxed = _group(client, node)
    pxe = _port(client, node, '52:54:00:aa:00:02',
                portgroup_uuid=relaxed['uuid'])
    assert pxe['pxe_enabled'] is True
    response = _patch(client, '/v1/portgroups/' + relaxed['uuid'],
                      {'op': 'replace',
                       'path': '/standalone_ports_supported',
                       'value': False})
    assert response.status_code == 409
    assert 'standalone_ports_supported can not be set to False' in _fault(
        response)
    _patch(client, '/v1/ports/' + pxe['uuid'],
           {'op': 'replace', 'path': '/pxe_enabled', 'value': False})
    response = _patch(client, '/v1/portgroups/' + relaxed['uuid'],
                      {'op': 'replace',
                       'path': '/standalone_ports_supported',
                       'value': 'False'})
    assert response.status_code == 200
    assert response.get_json()['standalone_ports_supported'] is False


def test_ports_of_a_group_share_a_physical_network(client, db):
    node = _node(db)
    group = _group(client, node)
    _port(client, node, MAC, physical_network='physnet1',
          portgroup_uuid=group['uuid'])
    response = client.post('/v1/ports', headers=V, json={
        'address': '52:54:00:aa:00:02', 'node_uuid': node.uuid,
        'physical_network': 'physnet2', 'portgroup_uuid': group['uuid']})
    assert response.status_code == 409
    assert ('cannot become a member of port group %s which has ports in '
            'physical network physnet1' % group['uuid']) in _fault(response)
    loose = _port(client, node, '52:54:00:aa:00:03')
    response = _patch(client, '/v1/ports/' + loose['uuid'],
                      {'op': 'replace', 'path': '/portgroup_uuid',
                       'value': group['uuid']})
    assert response.status_code == 409
    assert port_obj.Port.get(db, loose['uuid']).portgroup_id is None


def test_mac_and_name_uniqueness(client, db):
    node = _node(db)
    group = _group(client, node, name='bond0', address=MAC)
    # A bond commonly takes the MAC of one of its ports.
    _port(client, node, MAC, portgroup_uuid=group['uuid'])
    response = client.post('/v1/portgroups', headers=V, json={
        'node_uuid': node.uuid, 'address': MAC})
    assert response.status_code == 409
    assert 'A portgroup with MAC address %s already exists.' % MAC == \
        _fault(response)
    response = client.post('/v1/portgroups', headers=V, json={
        'node_uuid': node.uuid, 'name': 'bond0'})
    assert response.status_code == 409
    assert 'A portgroup with name bond0 already exists.' == _fault(response)
    response = client.post('/v1/portgroups', headers=V, json={
        'node_uuid': node.uuid, 'uuid': group['uuid']})
    assert response.status_code == 409
    assert group['uuid'] in _fault(response)
    other = _group(client, node, address='52:54:00:aa:00:02')
    response = _patch(client, '/v1/portgroups/' + other['uuid'],
                      {'op': 'replace', 'path': '/address', 'value': MAC})
    assert response.status_code == 409


@pytest.mark.parametrize('values, words', [
    ({'name': 'bad name'}, "invalid portgroup name 'bad name'"),
    ({'name': MISSING}, 'look like a UUID'),
    ({'address': 'nope'}, 'Expected a MAC address'),
    ({'colour': 'red'}, "'colour' was unexpected"),
    ({'standalone_ports_supported': 'maybe'},
     'standalone_ports_supported must be true or false'),
    ({'extra': []}, 'extra'),
    ({'dynamic_portgroup': True}, 'dynamic_portgroup'),
    ({'node_uuid': MISSING}, MISSING),
    ({'node_uuid': 'n1'}, 'node_uuid must be a UUID'),
    ({'uuid': 'x'}, 'uuid must be a UUID'),
])
def test_create_rejects_bad_input(client, db, values, words):
    body = {'node_uuid': _node(db).uuid}
    body.update(values)
    response = client.post('/v1/portgroups', headers=V, json=body)
    assert response.status_code == 400
    assert words in _fault(response)
    assert portgroup_obj.Portgroup.list(db) == []


def test_patch(client, db):
    node, other = _node(db), _node(db, provision_state='active')
    group = _group(client, node, extra={'a': 1})
    path = '/v1/portgroups/' + group['uuid']
    response = _patch(client, path,
                      {'op': 'add', 'path': '/extra/b', 'value': 2},
                      {'op': 'replace', 'path': '/name', 'value': 'bond1'},
                      {'op': 'replace', 'path': '/mode', 'value': '802.3ad'},
                      {'op': 'add', 'path': '/properties/miimon',
                       'value': 100})
    assert response.status_code == 200, response.get_data(as_text=True)
    patched = response.get_json()
    assert patched['extra'] == {'a': 1, 'b': 2} and patched['name'] == 'bond1'
    assert patched['mode'] == '802.3ad' and patched['updated_at']
    assert patched['properties'] == {'miimon': 100}
    for ops, status, words in [
            ([{'op': 'remove', 'path': '/mode'}], 400, "'mode' is a"),
            ([{'op': 'replace', 'path': '/uuid', 'value': MISSING}], 400,
             'Cannot patch /uuid'),
            ([{'op': 'replace', 'path': '/name', 'value': 'a b'}], 400,
             'invalid portgroup name'),
            ([{'op': 'replace', 'path': '/node_uuid', 'value': other.uuid}],
             409, 'can not be associated to node')]:
        response = _patch(client, path, *ops)
        assert (response.status_code, words in _fault(response)) == (
            status, True), _fault(response)
    assert portgroup_obj.Portgroup.get(db, group['uuid']).node_id == node.id
    other.maintenance = True
    other.save()
    response = _patch(client, path, {'op': 'replace', 'path': '/node_uuid',
                                     'value': other.uuid})
    assert response.get_json()['node_uuid'] == other.uuid
    node.provision_state = 'inspecting'
    node.save()
    response = _patch(client, path, {'op': 'replace', 'path': '/node_uuid',
                                     'value': node.uuid})
    assert response.status_code == 409
    assert 'inspecting' in _fault(response)


def test_list_filters_fields_and_paging(client, db):
    n1, n2 = _node(db, name='n1'), _node(db)
    for i in range(4):
        _group(client, n1 if i % 2 else n2, name='g%d' % i,
               address='52:54:00:aa:00:%02x' % i)
    summary = client.get('/v1/portgroups', headers=V).get_json()
    assert [sorted(g) for g in summary['portgroups']][0] == [
        'address', 'links', 'name', 'uuid']
    by_node = client.get('/v1/portgroups?node=n1', headers=V).get_json()
    assert [g['name'] for g in by_node['portgroups']] == ['g1', 'g3']
    by_address = client.get('/v1/portgroups/detail?address=52:54:00:AA:00:02',
                            headers=V).get_json()['portgroups']
    assert [g['name'] for g in by_address] == ['g2']
    assert by_address[0]['node_uuid'] == n2.uuid
    response = client.get('/v1/portgroups?node=n1&address=' + MAC, headers=V)
    assert response.status_code == 400
    assert 'simultaneously' in _fault(response)
    fields = client.get('/v1/portgroups?fields=name,mode',
                        headers=V).get_json()['portgroups']
    assert fields[0] == {'name': 'g0', 'mode': 'active-backup'}
    assert client.get('/v1/portgroups?node=nope',
                      headers=V).status_code == 404
    seen, url = [], '/v1/portgroups?limit=3&sort_key=name&sort_dir=desc'
    while url:
        page = client.get(url, headers=V).get_json()
        seen += [g['name'] for g in page['portgroups']]
        url = page.get('next')
        if url:
            parsed = urllib.parse.urlsplit(url)
            assert parsed.path == '/v1/portgroups'
            url = parsed.path + '?' + parsed.query
    assert seen == ['g3', 'g2', 'g1', 'g0']
    assert client.get('/v1/portgroups?sort_key=extra',
                      headers=V).status_code == 400
    assert client.get('/v1/portgroups/bad%20name',
                      headers=V).status_code == 400


@_since(102)
def test_group_physical_network_is_its_ports(client, db):
    node = _node(db)
    group = _group(client, node, headers=_version(102),
                   physical_network='physnet1')
    response = client.post('/v1/ports', headers=V, json={
        'address': MAC, 'node_uuid': node.uuid,
        'portgroup_uuid': group['uuid']})
    # The first port takes the group's network, or is refused.
    assert response.status_code == 409
    port = _port(client, node, MAC, physical_network='physnet1',
                 portgroup_uuid=group['uuid'])
    response = _patch(client, '/v1/portgroups/' + group['uuid'],
                      {'op': 'replace', 'path': '/physical_network',
                       'value': 'physnet2'}, headers=_version(102))
    assert response.get_json()['physical_network'] == 'physnet2'
    assert port_obj.Port.get(db, port['uuid']).physical_network == 'physnet2'
    response = _patch(client, '/v1/ports/' + port['uuid'],
                      {'op': 'replace', 'path': '/physical_network',
                       'value': 'physnet3'}, headers=_version(102))
    assert response.status_code == 400
    assert 'while the port belongs to a portgroup' in _fault(response)


@_since(111)
def test_newer_group_fields(client, db):
    group = _group(client, _node(db), headers=_version(103),
                   category='storage')
    assert group['category'] == 'storage'
    assert 'dynamic_portgroup' not in group
    shown = client.get('/v1/portgroups/' + group['uuid'],
                       headers=_version(111)).get_json()
    assert shown['dynamic_portgroup'] is False
    response = client.post('/v1/portgroups', headers=_version(102), json={
        'node_uuid': _node(db).uuid, 'category': 'x'})
    assert response.status_code == 406


@_since(111)
def test_newer_port_fields_and_filters(client, db):
    node = _node(db, name='n1', conductor_group='rack1')
    values = {'name': 'eth0', 'description': 'first uplink',
              'vendor': 'intel', 'category': 'data',
              'available_for_dynamic_portgroup': False}
    for field, minor in (('name', 88), ('description', 97), ('vendor', 100),
                         ('category', 101),
                         ('available_for_dynamic_portgroup', 111)):
        response = client.post('/v1/ports', headers=_version(minor - 1),
                               json={'address': MAC, 'node_ident': node.uuid,
                                     field: values[field]})
        assert response.status_code == 406, field
    # node_ident (1.94) takes a name.
    port = _port(client, node, MAC, headers=_version(111), **values)
    assert {k: port[k] for k in values} == values
    shown = client.get('/v1/ports/eth0', headers=_version(88)).get_json()
    assert shown['uuid'] == port['uuid'] and 'description' not in shown
    assert client.get('/v1/ports/eth0', headers=V).status_code == 404
    response = client.post('/v1/ports', headers=_version(94), json={
        'address': '52:54:00:aa:00:02', 'node_ident': 'n1'})
    assert response.status_code == 201
    assert client.post('/v1/ports', headers=_version(93), json={
        'address': '52:54:00:aa:00:03',
        'node_ident': 'n1'}).status_code == 406
    found = client.get('/v1/ports?description_contains=uplink',
                       headers=_version(97)).get_json()['ports']
    assert [p['uuid'] for p in found] == [port['uuid']]
    found = client.get('/v1/ports?conductor_groups=rack1,rack2',
                       headers=_version(99)).get_json()['ports']
    assert len(found) == 2
    assert client.get('/v1/ports?conductor_groups=rack2',
                      headers=_version(99)).get_json()['ports'] == []
    assert client.get('/v1/ports?conductor_groups=rack1',
                      headers=_version(98)).status_code == 406
    groups = client.get('/v1/portgroups?conductor_groups=rack2',
                        headers=_version(99)).get_json()
    assert groups == {'portgroups': []}
    response = client.post('/v1/ports', headers=_version(111), json={
        'address': '52:54:00:aa:00:04', 'node_uuid': node.uuid,
        'name': 'eth0'})
    assert response.status_code == 409
    assert 'A port with name eth0 already exists.' == _fault(response)
