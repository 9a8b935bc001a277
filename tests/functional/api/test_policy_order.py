# SPDX-License-Identifier: Apache-2.0
"""Ironic's policy answers where the order of the checks decides them:
a PATCH's per-path rules before the patch is applied, a port create's
rule before its node is looked for, and self-service nodes (Ironic's
``create:self_owned_node`` and ``delete:self_owned_node``)."""

import pytest

from ferrum.api import app as api_app
from ferrum.objects import node as node_obj
from tests.functional.api import tenancy
from tests.functional.api.tenancy import fault
from tests.functional.api.tenancy import headers


def _node(db, name, **values):
    return node_obj.Node.create(db, dict(
        values, driver='fake-hardware', name=name, owner=tenancy.OWNER,
        lessee=tenancy.LESSEE))


def test_a_lessees_patch_of_a_redacted_key_is_403_not_a_failed_patch(
        ks_client, tokens, db):
    _node(db, 'n', driver_info={'ipmi_address': 'bmc-7'})
    for path in ('/driver_info/ipmi_address', '/driver_info'):
        response = ks_client.patch('/v1/nodes/n', headers=headers(
            tokens, 'lessee_admin'), json=[
                {'op': 'replace', 'path': path, 'value': 'bmc-8'}])
        assert response.status_code == 403, response.get_data(as_text=True)
        assert 'baremetal:node:update:driver_info' in fault(response)
    # Every path's rule, not only the first: a permitted one beside it
    # changes nothing.
    response = ks_client.patch('/v1/nodes/n', headers=headers(
        tokens, 'lessee_member'), json=[
            {'op': 'add', 'path': '/extra/x', 'value': 1},
            {'op': 'remove', 'path': '/properties/cpus'}])
    assert response.status_code == 403
    assert 'baremetal:node:update:properties' in fault(response)
    found = node_obj.Node.get(db, 'n')
    assert found.driver_info == {'ipmi_address': 'bmc-7'}
    assert found.extra == {}


def test_a_patch_of_network_data_is_its_rule_then_not_served(
        ks_client, tokens, db):
    _node(db, 'n')
    patch = [{'op': 'add', 'path': '/network_data/links', 'value': []}]
    v66 = {'X-OpenStack-Ironic-API-Version': '1.66'}
    response = ks_client.patch('/v1/nodes/n', json=patch, headers=headers(
        tokens, 'lessee_admin', **v66))
    assert response.status_code == 403
    assert 'baremetal:node:update:network_data' in fault(response)
    response = ks_client.patch('/v1/nodes/n', json=patch, headers=headers(
        tokens, 'owner_member', **v66))
    assert response.status_code == 400
    assert 'network_data is not served' in fault(response)


def test_a_read_only_field_is_400_before_any_rule(ks_client, tokens, db):
    """As Ironic's allowed-fields check, which comes before its rules."""
    _node(db, 'n')
    for persona in ('lessee_reader', 'system_admin'):
        response = ks_client.patch('/v1/nodes/n', headers=headers(
            tokens, persona), json=[
                {'op': 'replace', 'path': '/provision_state',
                 'value': 'active'}])
        assert response.status_code == 400, persona
        assert "'/provision_state' is a read-only" in fault(response)


def test_a_port_create_checks_its_rule_before_it_looks_for_the_node(
        ks_client, tokens, db):
    missing = tenancy.new_uuid()
    port = {'node_uuid': missing, 'address': '52:54:00:12:34:56'}
    for persona in ('owner_admin', 'third_party', 'system_reader'):
        response = ks_client.post('/v1/ports', json=port,
                                  headers=headers(tokens, persona))
        assert response.status_code == 403, persona
        assert 'baremetal:port:create' in fault(response)
    response = ks_client.post('/v1/ports', json=port,
                              headers=headers(tokens, 'system_admin'))
    assert response.status_code == 400
    assert missing in fault(response)
    # Another project's node: the rule, never the 400 of concealment.
    node = node_obj.Node.create(db, {'driver': 'fake-hardware',
                                     'owner': tenancy.OTHER})
    response = ks_client.post('/v1/ports', json=dict(
        port, node_uuid=node.uuid), headers=headers(tokens, 'owner_admin'))
    assert response.status_code == 403
    # A body that is no port is a 400 first, for anyone (Ironic validates
    # its schema before the method runs).
    response = ks_client.post('/v1/ports', json={'node_uuid': missing},
                              headers=headers(tokens, 'system_reader'))
    assert response.status_code == 400


def test_a_project_admin_creates_and_deletes_its_own_nodes(
        ks_client, tokens, db):
    owner_admin = headers(tokens, 'owner_admin')
    response = ks_client.post('/v1/nodes', headers=owner_admin,
                              json={'driver': 'fake-hardware', 'name': 'mine'})
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.get_json()['owner'] == tenancy.OWNER
    # Its own project, named: the same.
    response = ks_client.post('/v1/nodes', headers=owner_admin, json={
        'driver': 'fake-hardware', 'owner': tenancy.OWNER})
    assert response.status_code == 201
    response = ks_client.post('/v1/nodes', headers=owner_admin, json={
        'driver': 'fake-hardware', 'owner': tenancy.OTHER})
    assert response.status_code == 400
    assert 'owner other than your own project' in fault(response)
    # A member is no admin.
    response = ks_client.post('/v1/nodes', json={'driver': 'fake-hardware'},
                              headers=headers(tokens, 'owner_member'))
    assert response.status_code == 403
    # A system admin's node is as it asks, ownerless too.
    response = ks_client.post('/v1/nodes', json={'driver': 'fake-hardware',
                                                 'name': 'free'},
                              headers=headers(tokens, 'system_admin'))
    assert response.get_json()['owner'] is None
    # The lessee's admin may not delete a node it leases.
    _node(db, 'leased')
    response = ks_client.delete('/v1/nodes/leased',
                                headers=headers(tokens, 'lessee_admin'))
    assert response.status_code == 403
    assert ks_client.delete('/v1/nodes/mine',
                            headers=owner_admin).status_code == 204
    assert ks_client.get('/v1/nodes/mine', headers=headers(
        tokens, 'system_reader')).status_code == 404


@pytest.fixture
def no_self_service(keystone_conf, db, conductor):
    keystone_conf.set_override('project_admin_can_manage_own_nodes', False,
                               group='api')
    return api_app.create_app(keystone_conf, db,
                              conductor.manager).test_client()


def test_without_self_service_only_a_system_admin_creates_and_deletes(
        no_self_service, tokens, db):
    owner_admin = headers(tokens, 'owner_admin')
    response = no_self_service.post('/v1/nodes', headers=owner_admin,
                                    json={'driver': 'fake-hardware'})
    assert response.status_code == 403
    assert 'baremetal:node:create' in fault(response)
    node = _node(db, 'owned')
    response = no_self_service.delete('/v1/nodes/owned', headers=owner_admin)
    assert response.status_code == 403
    assert 'baremetal:node:delete' in fault(response)
    assert node_obj.Node.get(db, node.uuid).owner == tenancy.OWNER
