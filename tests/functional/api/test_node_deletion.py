# SPDX-License-Identifier: Apache-2.0
"""Deleting nodes, and the protected and retired flags, by Ironic's rules."""

import pytest

from ferrum.common import exception
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj
from tests.functional.api.nodes import V
from tests.functional.api.nodes import create as _create_node
from tests.functional.api.nodes import fault as _fault
from tests.functional.conductor.flows import settled


def _node(client, **values):
    return _create_node(client, **values)['uuid']


def _to(conductor, db, uuid, *actions):
    targets = {'manage': 'manageable', 'provide': 'available',
               'active': 'active', 'deleted': 'available'}
    node_id = node_obj.Node.get(db, uuid).id
    for action in actions:
        conductor.manager.do_provisioning_action(uuid, action)
        settled(db, node_id, targets[action])


def _patch(client, uuid, *ops):
    return client.patch('/v1/nodes/' + uuid, headers=V, json=[
        {'op': 'replace', 'path': path, 'value': value}
        for path, value in ops])


def test_available_node_is_deleted_by_default(client, conductor, db):
    uuid = _node(client)
    _to(conductor, db, uuid, 'manage', 'provide')
    assert client.delete('/v1/nodes/' + uuid, headers=V).status_code == 204
    assert client.get('/v1/nodes/' + uuid, headers=V).status_code == 404


def test_available_node_is_kept_when_the_option_says_so(client, conductor,
                                                        db, conf):
    conf.set_override('allow_deleting_available_nodes', False,
                      group='conductor')
    uuid = _node(client)
    _to(conductor, db, uuid, 'manage', 'provide')
    response = client.delete('/v1/nodes/' + uuid, headers=V)
    assert response.status_code == 409
    fault = _fault(response)
    # The message names the state and the states that would allow it.
    assert '"available"' in fault and '"manageable"' in fault
    assert 'maintenance' in fault
    assert client.put('/v1/nodes/%s/maintenance' % uuid, headers=V,
                      json={'reason': 'retiring'}).status_code == 202
    assert client.delete('/v1/nodes/' + uuid, headers=V).status_code == 204


def test_failed_and_busy_states_are_refused_naming_the_allowed_ones(
        client, conductor, db):
    uuid = _node(client)
    _to(conductor, db, uuid, 'manage', 'provide', 'active')
    response = client.delete('/v1/nodes/' + uuid, headers=V)
    assert response.status_code == 409
    fault = _fault(response)
    for state in ('"adopt failed"', '"available"', '"enroll"',
                  '"manageable"'):
        assert state in fault
    assert node_obj.Node.get(db, uuid).reservation is None


def test_protected_node_is_refused_until_unprotected(client, conductor, db):
    uuid = _node(client)
    _to(conductor, db, uuid, 'manage', 'provide', 'active')
    assert _patch(client, uuid, ('/protected', True),
                  ('/protected_reason', 'prod db')).status_code == 200
    assert client.put('/v1/nodes/%s/maintenance' % uuid, headers=V,
                      json={}).status_code == 202
    response = client.delete('/v1/nodes/' + uuid, headers=V)
    assert response.status_code == 409
    assert 'protected' in _fault(response)
    response = client.put('/v1/nodes/%s/states/provision' % uuid, headers=V,
                          json={'target': 'deleted'})
    assert response.status_code == 409 and 'protected' in _fault(response)
    node = _patch(client, uuid, ('/protected', False)).get_json()
    # Unprotecting clears the reason, as in Ironic.
    assert node['protected'] is False and node['protected_reason'] is None
    assert client.delete('/v1/nodes/' + uuid, headers=V).status_code == 204


def test_protected_only_on_active_nodes_and_reason_needs_flag(client):
    uuid = _node(client)
    response = _patch(client, uuid, ('/protected', True))
    assert response.status_code == 409 and '"active"' in _fault(response)
    response = _patch(client, uuid, ('/protected_reason', 'why'))
    assert response.status_code == 400
    assert 'protected is true' in _fault(response)


def test_deleting_a_node_deletes_its_ports_and_allocations(client, conductor,
                                                           db):
    uuid = _node(client, resource_class='del-rc')
    _to(conductor, db, uuid, 'manage', 'provide')
    for mac in ('52:54:00:00:00:01', '52:54:00:00:00:02'):
        assert client.post('/v1/ports', headers=V, json={
            'node_uuid': uuid, 'address': mac}).status_code == 201
    response = client.post('/v1/allocations', headers=V,
                           json={'resource_class': 'del-rc'})
    allocation = response.get_json()
    assert allocation['state'] == 'active' and allocation['node_uuid'] == uuid
    node_id = node_obj.Node.get(db, uuid).id
    # An allocated, available node out of maintenance has an instance.
    response = client.delete('/v1/nodes/' + uuid, headers=V)
    assert response.status_code == 409 and 'instance' in _fault(response)
    assert client.put('/v1/nodes/%s/maintenance' % uuid, headers=V,
                      json={}).status_code == 202
    assert client.delete('/v1/nodes/' + uuid, headers=V).status_code == 204
    assert port_obj.Port.list(db, node_id=node_id) == []
    with pytest.raises(exception.AllocationNotFound):
        allocation_obj.Allocation.get(db, allocation['uuid'])
    assert client.get('/v1/allocations/' + allocation['uuid'],
                      headers=V).status_code == 404


def test_retired_reason_is_cleared_with_retired(client, conductor, db):
    uuid = _node(client)
    # The baremetal CLI sends booleans as strings; Ironic takes them.
    node = _patch(client, uuid, ('/retired', 'True'),
                  ('/retired_reason', 'EOL')).get_json()
    assert node['retired'] is True and node['retired_reason'] == 'EOL'
    node = _patch(client, uuid, ('/retired', False)).get_json()
    assert node['retired'] is False and node['retired_reason'] is None
    response = _patch(client, uuid, ('/retired_reason', 'EOL'))
    assert response.status_code == 400
    assert 'retired is true' in _fault(response)


def test_retired_node_is_not_provided_and_ends_manageable(client, conductor,
                                                          db):
    uuid = _node(client)
    _to(conductor, db, uuid, 'manage', 'provide')
    # Retiring an available node would hide capacity: Ironic refuses it.
    response = _patch(client, uuid, ('/retired', True))
    assert response.status_code == 409 and '"available"' in _fault(response)
    _to(conductor, db, uuid, 'active')
    assert _patch(client, uuid, ('/retired', True)).status_code == 200
    # Tearing a retired node down cleans it, then parks it in manageable.
    conductor.manager.do_provisioning_action(uuid, 'deleted')
    settled(db, node_obj.Node.get(db, uuid).id, 'manageable')
    response = client.put('/v1/nodes/%s/states/provision' % uuid, headers=V,
                          json={'target': 'provide'})
    assert response.status_code == 400 and 'retired' in _fault(response)
