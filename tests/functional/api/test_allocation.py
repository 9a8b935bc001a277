# SPDX-License-Identifier: Apache-2.0
"""Allocations through the API: create, list, get, PATCH, delete, implicit
deletes."""

import json
import uuid

import pytest

from ferrum.api import app as api_app
from ferrum.conductor import service
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj
from ferrum.placement import outbox
from tests.functional.conductor.flows import busy_workers
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state
from tests.polling import wait_for
from tests.real import require_real

V = {'X-OpenStack-Ironic-API-Version': '1.65'}


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


@pytest.fixture
def make_node(conductor, db):
    """An available fake-hardware node with a resource class and traits."""
    def make(name=None, resource_class='gold', traits=(), state='available',
             **values):
        node = conductor.manager.create_node(dict(
            values, driver='fake-hardware', name=name,
            resource_class=resource_class))
        if traits:
            trait_obj.set_for_node(db, node.id, traits)
        return to_state(conductor.manager, db, node, state)
    return make


def _allocate(client, status=201, **body):
    response = client.post('/v1/allocations', json=body, headers=V)
    assert response.status_code == status, response.get_data(as_text=True)
    return response.get_json()


def test_allocation_takes_a_matching_node_in_one_transaction(
        client, db, make_node):
    make_node('plain')
    gpu = make_node('gpu', traits=['CUSTOM_GPU', 'HW_CPU_X86_AVX2'])
    response = client.post('/v1/allocations', headers=V, json={
        'resource_class': 'gold', 'traits': ['CUSTOM_GPU'], 'name': 'web-1',
        'extra': {'team': 'a'}})
    assert response.status_code == 201
    allocation = response.get_json()
    assert response.headers['Location'].endswith(
        '/v1/allocations/' + allocation['uuid'])
    assert allocation['state'] == 'active' and allocation['last_error'] is None
    assert allocation['node_uuid'] == gpu.uuid
    assert allocation['traits'] == ['CUSTOM_GPU']
    assert allocation['extra'] == {'team': 'a'}
    node = client.get('/v1/nodes/gpu', headers=V).get_json()
    assert node['allocation_uuid'] == allocation['uuid']
    assert node['instance_uuid'] == allocation['uuid']
    assert node['instance_info'] == {'traits': ['CUSTOM_GPU']}
    for path in ('/v1/allocations/web-1', '/v1/allocations/' +
                 allocation['uuid'], '/v1/nodes/gpu/allocation'):
        shown = client.get(path, headers=V).get_json()
        assert shown['uuid'] == allocation['uuid'], path


def test_failure_explains_which_filter_removed_what(client, make_node):
    make_node('a', traits=['CUSTOM_GPU'])
    make_node('b')
    make_node('c', state='manageable')
    make_node('d', resource_class='silver', traits=['CUSTOM_GPU'])
    first = _allocate(client, resource_class='gold', traits=['CUSTOM_GPU'])
    assert first['state'] == 'active'
    failed = _allocate(client, resource_class='gold', traits=['CUSTOM_GPU'])
    assert failed['state'] == 'error' and failed['node_uuid'] is None
    assert failed['last_error'] == (
        'No node matches this allocation: 3 nodes have resource class '
        '"gold"; of them 1 not in provision state "available", 1 already '
        'allocated or with an instance_uuid, 1 without trait CUSTOM_GPU.')
    nothing = _allocate(client, resource_class='bronze')
    assert nothing['last_error'] == (
        'No node matches this allocation: 0 nodes have resource class '
        '"bronze".')


def test_candidate_nodes_by_name_or_uuid_are_stored_as_uuids_in_order(
        client, db, make_node):
    first, second = make_node('first'), make_node('second')
    allocation = _allocate(client, resource_class='gold',
                           candidate_nodes=[second.uuid, 'first', 'second'])
    assert allocation['candidate_nodes'] == [second.uuid, first.uuid]
    assert allocation['node_uuid'] in (first.uuid, second.uuid)
    make_node('third')
    only = _allocate(client, resource_class='gold', candidate_nodes=['third'])
    assert only['node_uuid'] == node_obj.Node.get(db, 'third').uuid


def test_a_node_named_like_the_allocation_is_tried_first(client, db,
                                                          make_node):
    for index in range(6):
        make_node('host-%d' % index)
    for index in (4, 1, 5):
        allocation = _allocate(client, resource_class='gold',
                               name='host-%d' % index)
        assert allocation['node_uuid'] == node_obj.Node.get(
            db, 'host-%d' % index).uuid


@pytest.mark.parametrize('body, words', [
    ({}, 'needs a "resource_class"'),
    ({'resource_class': 'x' * 81}, 'resource_class'),
    ({'resource_class': 'gold', 'traits': ['not-a-trait']},
     'Invalid trait "not-a-trait"'),
    ({'resource_class': 'gold', 'traits': 'CUSTOM_A'}, 'traits'),
    ({'resource_class': 'gold', 'candidate_nodes': ['nope']},
     'Node nope could not be found'),
    ({'resource_class': 'gold', 'name': 'a b'}, 'at "/name"'),
    ({'resource_class': 'gold', 'name': str(uuid.uuid4())},
     'cannot look like a UUID'),
    ({'resource_class': 'gold', 'uuid': 'not-a-uuid'}, 'must be a UUID'),
    ({'resource_class': 'gold', 'colour': 'red'}, "'colour' was unexpected"),
    ({'node': 'nope'}, 'Node nope could not be found'),
])
def test_bad_create_requests_get_a_clear_400(client, body, words):
    response = client.post('/v1/allocations', json=body, headers=V)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert words in _fault(response)


def test_duplicates_conflict(client, db, make_node):
    make_node('n1')
    taken = _allocate(client, resource_class='gold', name='dup')
    response = client.post('/v1/allocations', headers=V,
                           json={'resource_class': 'gold', 'name': 'dup'})
    assert response.status_code == 409 and 'dup' in _fault(response)
    response = client.post('/v1/allocations', headers=V, json={
        'resource_class': 'gold', 'uuid': taken['uuid']})
    assert response.status_code == 409
    # A UUID that is some node's instance_uuid conflicts too.
    node = make_node('n2')
    instance = str(uuid.uuid4())
    node_obj.Node.get(db, node.id).save(instance_uuid=instance)
    response = client.post('/v1/allocations', headers=V, json={
        'resource_class': 'gold', 'uuid': instance})
    assert response.status_code == 409 and instance in _fault(response)


def test_version_gates(client, make_node):
    make_node('n1')
    old = {'X-OpenStack-Ironic-API-Version': '1.51'}
    for method, path in (('get', '/v1/allocations'),
                         ('post', '/v1/allocations'),
                         ('get', '/v1/nodes/n1/allocation')):
        response = getattr(client, method)(path, headers=old,
                                           json={'resource_class': 'gold'})
        assert response.status_code == 404, path
        assert '1.52' in _fault(response)
    at_56 = {'X-OpenStack-Ironic-API-Version': '1.56'}
    allocation = _allocate(client, resource_class='gold')
    response = client.patch('/v1/allocations/' + allocation['uuid'],
                            headers=at_56, json=[
                                {'op': 'add', 'path': '/name', 'value': 'x'}])
    assert response.status_code == 406
    at_59 = {'X-OpenStack-Ironic-API-Version': '1.59'}
    response = client.post('/v1/allocations', headers=at_59, json={
        'resource_class': 'gold', 'owner': 'p1'})
    assert response.status_code == 406 and '1.60' in _fault(response)
    shown = client.get('/v1/allocations/' + allocation['uuid'],
                       headers=at_59).get_json()
    assert 'owner' not in shown and 'traits' in shown


def test_owner_matches_node_owner_or_lessee(client, make_node):
    make_node('theirs', owner='other')
    leased = make_node('leased', owner='other', lessee='p1')
    allocation = _allocate(client, resource_class='gold', owner='p1')
    assert allocation['node_uuid'] == leased.uuid
    assert allocation['owner'] == 'p1'
    failed = _allocate(client, resource_class='gold', owner='p1')
    assert 'with another owner and lessee' in failed['last_error']


def test_list_filters_fields_and_paging(client, make_node):
    for index in range(3):
        make_node('n%d' % index)
    made = [_allocate(client, resource_class='gold', name='a%d' % i)
            for i in range(3)]
    _allocate(client, resource_class='silver', name='broken')
    listed = client.get('/v1/allocations', headers=V).get_json()
    assert [a['name'] for a in listed['allocations']] == [
        'a0', 'a1', 'a2', 'broken']
    by_state = client.get('/v1/allocations?state=error',
                          headers=V).get_json()['allocations']
    assert [a['name'] for a in by_state] == ['broken']
    by_class = client.get('/v1/allocations?resource_class=gold',
                          headers=V).get_json()['allocations']
    assert len(by_class) == 3
    by_node = client.get('/v1/allocations?node=n1&fields=name,node_uuid',
                         headers=V).get_json()['allocations']
    assert len(by_node) == 1 and set(by_node[0]) == {'name', 'node_uuid',
                                                     'links'}
    page = client.get('/v1/allocations?limit=2&sort_key=name',
                      headers=V).get_json()
    assert [a['name'] for a in page['allocations']] == ['a0', 'a1']
    assert 'marker=' + made[1]['uuid'] in page['next']
    rest = client.get('/v1/allocations?limit=2&sort_key=name&marker='
                      + made[1]['uuid'], headers=V).get_json()
    assert [a['name'] for a in rest['allocations']] == ['a2', 'broken']
    for query, words in (('state=bogus', 'state must be one of'),
                         ('node=nope', 'Node nope could not be found'),
                         ('fields=bogus', 'bogus'),
                         ('sort_key=traits', 'not a field to sort by')):
        response = client.get('/v1/allocations?' + query, headers=V)
        assert response.status_code == 400, query
        assert words in _fault(response), query


def test_patch_changes_name_and_extra_only(client, make_node):
    make_node('n1')
    allocation = _allocate(client, resource_class='gold', name='before')
    path = '/v1/allocations/' + allocation['uuid']
    response = client.patch(path, headers=V, json=[
        {'op': 'replace', 'path': '/name', 'value': 'after'},
        {'op': 'add', 'path': '/extra/role', 'value': 'db'}])
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()['name'] == 'after'
    assert client.get('/v1/allocations/after', headers=V).get_json()[
        'extra'] == {'role': 'db'}
    for field in ('resource_class', 'node_uuid', 'state', 'traits'):
        response = client.patch(path, headers=V, json=[
            {'op': 'replace', 'path': '/' + field, 'value': 'x'}])
        assert response.status_code == 400, field
        assert 'read-only' in _fault(response)
    _allocate(client, resource_class='gold', name='other')
    response = client.patch(path, headers=V, json=[
        {'op': 'replace', 'path': '/name', 'value': 'other'}])
    assert response.status_code == 409


def test_delete_releases_the_node_but_not_while_it_is_in_use(
        client, conductor, db, make_node):
    node = make_node('n1')
    allocation = _allocate(client, resource_class='gold',
                           traits=[], name='a1')
    client.patch('/v1/nodes/n1', headers=V, json=[
        {'op': 'add', 'path': '/instance_info/image_source',
         'value': 'http://x'}])
    conductor.manager.do_provisioning_action(node.uuid, 'deploy')
    settled(db, node.id, 'active')
    response = client.delete('/v1/allocations/a1', headers=V)
    assert response.status_code == 409
    assert 'undeploy the node first' in _fault(response)
    response = client.patch('/v1/nodes/n1', headers=V, json=[
        {'op': 'remove', 'path': '/instance_uuid'}])
    assert response.status_code == 409
    # Tear-down deletes the allocation.
    conductor.manager.do_provisioning_action(node.uuid, 'deleted')
    settled(db, node.id, 'available')
    response = client.get('/v1/allocations/' + allocation['uuid'], headers=V)
    assert response.status_code == 404
    after = node_obj.Node.get(db, node.id)
    assert after.allocation_id is None and after.instance_uuid is None
    # An explicit delete on an available node releases it.
    again = _allocate(client, resource_class='gold')
    response = client.delete('/v1/nodes/n1/allocation', headers=V)
    assert response.status_code == 204
    after = node_obj.Node.get(db, node.id)
    assert after.allocation_id is None and after.instance_uuid is None
    assert 'traits' not in after.instance_info
    assert client.get('/v1/allocations/' + again['uuid'],
                      headers=V).status_code == 404
    assert client.get('/v1/nodes/n1/allocation',
                      headers=V).status_code == 404


def test_patching_away_instance_uuid_deletes_the_allocation(
        client, db, make_node):
    node = make_node('n1')
    allocation = _allocate(client, resource_class='gold')
    response = client.patch('/v1/nodes/n1', headers=V, json=[
        {'op': 'replace', 'path': '/allocation_uuid', 'value': None}])
    assert response.status_code == 400 and 'read-only' in _fault(response)
    response = client.patch('/v1/nodes/n1', headers=V, json=[
        {'op': 'replace', 'path': '/instance_uuid',
         'value': str(uuid.uuid4())}])
    assert response.status_code == 409
    response = client.patch('/v1/nodes/n1', headers=V, json=[
        {'op': 'remove', 'path': '/instance_uuid'}])
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()['allocation_uuid'] is None
    assert allocation_obj.Allocation.get_by_node(db, node.id) is None
    assert client.get('/v1/allocations/' + allocation['uuid'],
                      headers=V).status_code == 404


def test_deleting_a_node_in_maintenance_deletes_its_allocation(
        client, db, make_node):
    make_node('n1')
    allocation = _allocate(client, resource_class='gold')
    response = client.delete('/v1/nodes/n1', headers=V)
    assert response.status_code == 409
    client.put('/v1/nodes/n1/maintenance', headers=V, json={'reason': 'x'})
    response = client.delete('/v1/nodes/n1', headers=V)
    assert response.status_code == 204, response.get_data(as_text=True)
    assert client.get('/v1/allocations/' + allocation['uuid'],
                      headers=V).status_code == 404


def test_backfill_records_an_allocation_for_an_active_node(
        client, db, make_node):
    node = make_node('busy', traits=['CUSTOM_GPU'], state='active')
    make_node('idle')
    response = client.post('/v1/allocations', headers=V, json={
        'node': 'idle', 'resource_class': 'silver', 'traits': ['CUSTOM_X']})
    assert response.status_code == 400
    words = _fault(response)
    for problem in ('not "active"', 'resource class is gold, not silver',
                    'lacks trait(s) CUSTOM_X'):
        assert problem in words
    assert client.get('/v1/allocations',
                      headers=V).get_json()['allocations'] == []
    old = {'X-OpenStack-Ironic-API-Version': '1.57'}
    assert client.post('/v1/allocations', headers=old,
                       json={'node': 'busy'}).status_code == 406
    allocation = _allocate(client, node='busy', traits=['CUSTOM_GPU'])
    assert allocation['state'] == 'active'
    assert allocation['node_uuid'] == node.uuid
    assert allocation['resource_class'] == 'gold'
    assert node_obj.Node.get(db, node.id).instance_uuid == allocation['uuid']
    response = client.post('/v1/allocations', headers=V,
                           json={'node': 'busy'})
    assert response.status_code == 409


def test_backfill_takes_the_instance_uuid_nova_left_on_the_node(
        client, db, make_node):
    # Adopting a node nova deployed: the allocation is named after the
    # instance already recorded on the node, as in Ironic.
    instance = str(uuid.uuid4())
    node = make_node('adopted', state='active')
    node_obj.Node.get(db, node.id).save(instance_uuid=instance)
    allocation = _allocate(client, node='adopted')
    assert allocation['uuid'] == instance
    assert allocation['state'] == 'active'
    assert node_obj.Node.get(db, node.id).allocation_id is not None
    # Naming it explicitly is the same; another UUID is refused.
    other = make_node('other', state='active')
    node_obj.Node.get(db, other.id).save(instance_uuid=str(uuid.uuid4()))
    response = client.post('/v1/allocations', headers=V, json={
        'node': 'other', 'uuid': str(uuid.uuid4())})
    assert response.status_code == 409
    again = node_obj.Node.get(db, other.id)
    allocation = _allocate(client, node='other', uuid=again.instance_uuid)
    assert allocation['uuid'] == again.instance_uuid


def test_create_with_no_free_worker_never_leaves_allocating(
        client, conductor, db, make_node):
    make_node('n1')
    with busy_workers(conductor):
        # A free node is taken in the creating transaction, no worker
        # needed...
        quick = _allocate(client, resource_class='gold')
        # ...but a miss needs a worker to go on looking.
        slow = _allocate(client, resource_class='gold')
    assert quick['state'] == 'active'
    assert slow['state'] == 'error'
    assert 'No conductor worker was free' in slow['last_error']
    assert slow['node_uuid'] is None


@pytest.fixture(params=['database', 'placement'])
def backend_client(request, conf, db):
    """An API client on a conductor with ``[allocation] backend`` = the
    param; placement is the real one, in-process, with every node synced
    to it before the test allocates."""
    if request.param == 'placement':
        from tests.functional.placement.deployment import configure
        try:
            from placement.tests.functional.fixtures import placement
        except ImportError:
            require_real('openstack-placement (pip install -e .[test])')
        running = placement.PlacementFixture(token='admin')
        running.setUp()
        request.addfinalizer(running.cleanUp)
        configure(conf, running.endpoint)
        conf.set_override('poll_interval', 0.02, group='placement')
        # The fixture's Placement is one in-memory connection: one pusher.
        conf.set_override('push_workers', 1, group='placement')
        conf.set_override('backend', 'placement', group='allocation')
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    request.addfinalizer(svc.stop)
    for _ in range(2):
        node = svc.manager.create_node({
            'driver': 'fake-hardware', 'resource_class': 'gold'})
        to_state(svc.manager, db, node, 'available')
    # Nothing else talks to the in-process Placement while the test runs.
    wait_for(lambda: outbox.backlog(db).size == 0,
             what='the Placement outbox to drain')
    return api_app.create_app(conf, db, svc.manager).test_client()


def test_wait_timeout_0_answers_allocating_as_ironic_does(backend_client,
                                                          conf):
    conf.set_override('allocation_wait_timeout', 0, group='conductor')
    answer = _allocate(backend_client, resource_class='gold')
    assert answer['state'] == 'allocating' and answer['node_uuid'] is None
    path = '/v1/allocations/' + answer['uuid']

    def finished():
        shown = backend_client.get(path, headers=V).get_json()
        return shown if shown['state'] != 'allocating' else None
    done = wait_for(finished, what='the allocation to finish')
    assert done['state'] == 'active', done['last_error']
    node = backend_client.get('/v1/nodes/' + done['node_uuid'],
                              headers=V).get_json()
    assert node['allocation_uuid'] == answer['uuid']


def test_default_wait_answers_active(backend_client):
    answer = _allocate(backend_client, resource_class='gold')
    assert answer['state'] == 'active', answer['last_error']
    assert answer['node_uuid'] is not None
