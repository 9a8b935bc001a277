# SPDX-License-Identifier: Apache-2.0
"""Give-back forgets the tenant: when its allocation is deleted, or its
lease ends, a node loses the tenant's VIFs and ``instance_info``, and the
next tenant sees none of them; on SQLite and on PostgreSQL, through the
API and real keystonemiddleware."""

import datetime

import pytest

from ferrum.api import app as api_app
from ferrum.conductor import service
from ferrum.leases import engine
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj
from tests.functional.api import tenancy
from tests.functional.api.tenancy import headers
from tests.functional.conductor.flows import settled
from tests.functional.leases.sites import FAKE
from tests.functional.leases.sites import iso
from tests.polling import wait_for

VIFS = ['5d0b6e2c-0a4e-4d3f-9c55-0d1f2f3a4b01',
        '5d0b6e2c-0a4e-4d3f-9c55-0d1f2f3a4b02']


@pytest.fixture(params=['sqlite', 'postgresql'])
def site(request, keystone_conf, tokens):
    """(client, db, conductor) on one backend."""
    keystone_conf.set_override('guard_time', 0, 'lease')
    keystone_conf.set_override('cleaning_margin', 0, 'lease')
    if request.param == 'sqlite':
        db = request.getfixturevalue('db')
        conductor = request.getfixturevalue('conductor')
    else:
        db = request.getfixturevalue('pg_db')
        conductor = service.ConductorService(keystone_conf, db=db)
        conductor.start(start_periodics=False)
        request.addfinalizer(conductor.stop)
    client = api_app.create_app(keystone_conf, db,
                                conductor.manager).test_client()
    return client, db, conductor


def _node_with_a_port(db, **values):
    node = node_obj.Node.create(db, dict(FAKE, name='n', **values))
    port_obj.Port.create(db, {'node_id': node.id,
                              'address': '52:54:00:aa:bb:01'})
    return node


def _use(client, tokens, persona):
    """What a tenant leaves: two VIFs (one on the port, one waiting on the
    node for a free port) and instance_info."""
    as_tenant = headers(tokens, persona)
    for vif in VIFS:
        response = client.post('/v1/nodes/n/vifs', headers=as_tenant,
                               json={'id': vif})
        assert response.status_code == 204, response.get_data(as_text=True)
    response = client.patch('/v1/nodes/n', headers=as_tenant, json=[
        {'op': 'add', 'path': '/instance_info/image_source',
         'value': 'http://tenant.example/secret.img'}])
    assert response.status_code == 200, response.get_data(as_text=True)
    assert _vifs(client, tokens) == VIFS


def _vifs(client, tokens, persona='system_reader'):
    response = client.get('/v1/nodes/n/vifs', headers=headers(tokens,
                                                               persona))
    assert response.status_code == 200, response.get_data(as_text=True)
    return [vif['id'] for vif in response.get_json()['vifs']]


def _forgotten(client, tokens, db, node):
    assert _vifs(client, tokens) == []
    found = node_obj.Node.get(db, node.id)
    assert found.instance_info == {}
    assert not found.driver_internal_info.get('vifs')
    [port] = port_obj.Port.list(db, node_id=node.id)
    assert 'tenant_vif_port_id' not in port.internal_info


def test_a_deleted_allocation_takes_the_tenants_vifs_and_instance_info(
        site, tokens):
    client, db, _conductor = site
    node = _node_with_a_port(db, owner=tenancy.OWNER)
    as_owner = headers(tokens, 'owner_member')
    response = client.post('/v1/allocations', headers=as_owner,
                           json={'resource_class': 'gold'})
    assert response.status_code == 201
    allocation = tenancy.wait_allocated(client, tokens,
                                        response.get_json()['uuid'])
    assert allocation['node_uuid'] == node.uuid
    _use(client, tokens, 'owner_member')
    response = client.delete('/v1/allocations/%s' % allocation['uuid'],
                             headers=as_owner)
    assert response.status_code == 204, response.get_data(as_text=True)
    _forgotten(client, tokens, db, node)
    # The next allocation's owner finds the node bare.
    response = client.post('/v1/allocations', headers=headers(
        tokens, 'owner_admin'), json={'resource_class': 'gold'})
    tenancy.wait_allocated(client, tokens, response.get_json()['uuid'])
    assert _vifs(client, tokens, 'owner_admin') == []
    assert client.get('/v1/nodes/n', headers=headers(
        tokens, 'owner_admin')).get_json()['instance_info'] == {
            'traits': []}


def _lease(client, tokens, conductor, project):
    response = client.post('/v1/leases', headers=headers(
        tokens, 'system_member'), json={
            'project': project, 'candidate_nodes': ['n'],
            'end': iso(conductor.ctx.clock() + datetime.timedelta(hours=1))})
    assert response.status_code == 201, response.get_data(as_text=True)
    engine.run(conductor.ctx)
    return response.get_json()['uuid']


def test_a_lease_end_takes_the_lessees_vifs_and_instance_info(site, tokens):
    client, db, conductor = site
    node = _node_with_a_port(db, owner=tenancy.OWNER)
    lease = _lease(client, tokens, conductor, tenancy.LESSEE)
    assert node_obj.Node.get(db, node.id).lessee == tenancy.LESSEE
    _use(client, tokens, 'lessee_admin')
    assert client.delete('/v1/leases/%s' % lease, headers=headers(
        tokens, 'lessee_admin')).status_code == 204

    def back():
        engine.run(conductor.ctx)
        return lease_obj.Lease.get(db, lease).status == 'ended'
    wait_for(back, timeout=30, what='the lease to end')
    _forgotten(client, tokens, db, node)
    # The next tenant, another project, sees none of them.
    _lease(client, tokens, conductor, tenancy.THIRD)
    assert node_obj.Node.get(db, node.id).lessee == tenancy.THIRD
    assert _vifs(client, tokens, 'third_party') == []
    assert client.get('/v1/nodes/n', headers=headers(
        tokens, 'third_party')).get_json()['instance_info'] == {}


def test_a_tear_down_detaches_the_tenants_vifs(site, tokens):
    """Through the network interface, once the instance is torn down."""
    client, db, _conductor = site
    node = _node_with_a_port(db, owner=tenancy.OWNER)
    _use(client, tokens, 'owner_member')
    as_owner = headers(tokens, 'owner_member')
    for target, state in (('active', 'active'), ('deleted', 'available')):
        response = client.put('/v1/nodes/n/states/provision',
                              headers=as_owner, json={'target': target})
        assert response.status_code == 202, response.get_data(as_text=True)
        settled(db, node.id, state)
        if state == 'active':
            assert _vifs(client, tokens) == VIFS
    _forgotten(client, tokens, db, node)
