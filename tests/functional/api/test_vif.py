# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/vifs`` and the node's ``network_interface``."""

import pytest

from ferrum.objects import node as node_obj
from tests.functional.api.nodes import V
from tests.functional.api.nodes import create as _node
from tests.functional.api.nodes import fault as _fault


def _vifs(client, uuid):
    response = client.get('/v1/nodes/%s/vifs' % uuid, headers=V)
    assert response.status_code == 200
    return [vif['id'] for vif in response.get_json()['vifs']]


def _attach(client, uuid, vif, **extra):
    return client.post('/v1/nodes/%s/vifs' % uuid, headers=V,
                       json=dict(extra, id=vif))


def test_network_interface_is_a_node_field(client):
    node = _node(client, network_interface='noop')
    assert node['network_interface'] == 'noop'
    assert _node(client)['network_interface'] == 'noop'  # the default
    response = client.post('/v1/nodes', headers=V, json={
        'driver': 'fake-hardware', 'network_interface': 'neutron'})
    assert response.status_code == 400 and 'neutron' in _fault(response)
    response = client.patch('/v1/nodes/' + node['uuid'], headers=V, json=[
        {'op': 'replace', 'path': '/network_interface', 'value': 'noop'}])
    assert response.status_code == 200


def test_network_interface_from_1_20(client):
    for minor, code in ((19, 406), (20, 201)):
        response = client.post('/v1/nodes', json={
            'driver': 'fake-hardware', 'network_interface': 'noop'},
            headers={'X-OpenStack-Ironic-API-Version': '1.%d' % minor})
        assert response.status_code == code
    uuid = response.get_json()['uuid']
    shown = client.get('/v1/nodes/' + uuid, headers={
        'X-OpenStack-Ironic-API-Version': '1.19'}).get_json()
    assert 'network_interface' not in shown


def test_attach_list_detach_without_ports(client, db):
    uuid = _node(client)['uuid']
    assert _vifs(client, uuid) == []
    assert _attach(client, uuid, 'vif-a').status_code == 204
    assert _attach(client, uuid, 'vif-b').status_code == 204
    assert _vifs(client, uuid) == ['vif-a', 'vif-b']
    assert node_obj.Node.get(db, uuid).driver_internal_info['vifs'] == [
        'vif-a', 'vif-b']
    response = client.delete('/v1/nodes/%s/vifs/vif-a' % uuid, headers=V)
    assert response.status_code == 204
    assert _vifs(client, uuid) == ['vif-b']


def test_vifs_are_recorded_on_free_ports_first(client):
    uuid = _node(client)['uuid']
    ports = []
    for mac, pxe in (('52:54:00:00:aa:01', False), ('52:54:00:00:aa:02',
                                                     True)):
        response = client.post('/v1/ports', headers=V, json={
            'node_uuid': uuid, 'address': mac, 'pxe_enabled': pxe})
        ports.append(response.get_json()['uuid'])
    vif = '1a1b1c1d-0000-4000-8000-000000000001'
    assert _attach(client, uuid, vif).status_code == 204
    # The PXE-enabled port is taken first, as Ironic records it.
    pxe_port = client.get('/v1/ports/' + ports[1], headers=V).get_json()
    assert pxe_port['internal_info'] == {'tenant_vif_port_id': vif}
    assert _attach(client, uuid, 'vif-2', port_uuid=ports[0]).status_code \
        == 204
    assert sorted(_vifs(client, uuid)) == sorted([vif, 'vif-2'])
    # A port serving a VIF is not deleted outside maintenance.
    response = client.delete('/v1/ports/' + ports[1], headers=V)
    assert response.status_code == 409 and vif in _fault(response)
    assert client.delete('/v1/nodes/%s/vifs/%s' % (uuid, vif),
                         headers=V).status_code == 204
    assert client.get('/v1/ports/' + ports[1],
                      headers=V).get_json()['internal_info'] == {}
    assert client.delete('/v1/ports/' + ports[1], headers=V).status_code == 204


def test_errors_as_in_ironic(client):
    uuid = _node(client)['uuid']
    assert _attach(client, uuid, 'vif-x').status_code == 204
    response = _attach(client, uuid, 'vif-x')
    assert response.status_code == 409 and 'already attached' in _fault(
        response)
    response = client.delete('/v1/nodes/%s/vifs/vif-y' % uuid, headers=V)
    assert response.status_code == 400 and 'not attached' in _fault(
        response)
    for body in ({}, {'id': ''}, {'id': 'a b'}, {'id': 1}):
        response = client.post('/v1/nodes/%s/vifs' % uuid, headers=V,
                               json=body)
        assert response.status_code == 400, body
    response = _attach(client, uuid, 'vif-z',
                       port_uuid='1a1b1c1d-0000-4000-8000-00000000dead')
    assert response.status_code == 400 and 'not a port' in _fault(response)


@pytest.mark.parametrize('method, path', [
    ('GET', '/v1/nodes/%s/vifs'), ('POST', '/v1/nodes/%s/vifs'),
    ('DELETE', '/v1/nodes/%s/vifs/vif-1')])
def test_unknown_node_is_404(client, method, path):
    missing = '1a1b1c1d-0000-4000-8000-00000000beef'
    response = client.open(path % missing, method=method, headers=V,
                           json={'id': 'vif-1'})
    assert response.status_code == 404
    assert missing in _fault(response)


@pytest.mark.parametrize('method, path', [
    ('GET', '/v1/nodes/%s/vifs'), ('POST', '/v1/nodes/%s/vifs'),
    ('DELETE', '/v1/nodes/%s/vifs/vif-1')])
def test_vifs_from_1_28(client, method, path):
    uuid = _node(client)['uuid']
    response = client.open(path % uuid, method=method, json={'id': 'vif-1'},
                           headers={'X-OpenStack-Ironic-API-Version': '1.27'})
    assert response.status_code == 404
    assert '1.28' in _fault(response)
