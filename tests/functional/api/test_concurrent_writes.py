# SPDX-License-Identifier: Apache-2.0
"""Concurrent writes through the API, on SQLite and on the real PostgreSQL:
every request answers 2xx or a clear 4xx, never a 500.

Traits: twelve threads write one node's traits at once, and the node ends
with exactly one writer's set. On PostgreSQL a replace used to delete the
node's rows and insert the new set while another replace did the same:
the second insert hit the first one's rows (``DBDuplicateEntry`` on
``node_traits_pkey``, a 500), or both sets survived mixed. Adding one
trait read, then inserted, so two adds of the same trait collided too,
and twelve adds to a node one trait short of the limit all passed the
count check.

Ports: a port created (or moved) for a node deleted after the API looked
it up failed on the foreign key, a 500 on both databases.
"""

import json
import threading

import flask
import pytest
import sqlalchemy as sa

from ferrum.api import app as api_app
from ferrum.common import exception
from ferrum.conductor import service
from ferrum.drivers import vifs
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj
from ferrum.objects import trait as trait_obj

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
THREADS = 12
ROUNDS = 5


@pytest.fixture(params=['sqlite', 'postgresql'])
def world(request, conf):
    """(API app, database) on SQLite or on PostgreSQL."""
    if request.param == 'sqlite':
        return request.getfixturevalue('app'), request.getfixturevalue('db')
    database = request.getfixturevalue('pg_db')
    conductor = service.ConductorService(conf, db=database)
    conductor.start(start_periodics=False)
    request.addfinalizer(conductor.stop)
    return api_app.create_app(conf, database, conductor.manager), database


def _node(db) -> node_obj.Node:
    return node_obj.Node.create(db, {
        'driver': 'fake-hardware', 'provision_state': 'available',
        'power_state': 'power off'})


def _at_once(app, requests):
    """Send ``requests`` (method, path, json) from one thread each, all
    released together; returns [(status, body)] in the same order."""
    barrier = threading.Barrier(len(requests))
    results: list = [None] * len(requests)

    def send(index):
        method, path, body = requests[index]
        client = app.test_client()
        barrier.wait()
        response = client.open(path, method=method, json=body, headers=V)
        results[index] = (response.status_code,
                          response.get_data(as_text=True))

    threads = [threading.Thread(target=send, args=(index,))
               for index in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _written(index):
    # Every set shares CUSTOM_SHARED, so overlapping inserts collide.
    return sorted(['CUSTOM_SHARED', 'CUSTOM_W%d_A' % index,
                   'CUSTOM_W%d_B' % index])


def test_concurrent_replaces_leave_one_written_set(world):
    app, db = world
    node = _node(db)
    url = '/v1/nodes/%s/traits' % node.uuid
    written = [_written(index) for index in range(THREADS)]
    for _ in range(ROUNDS):
        results = _at_once(app, [('PUT', url, {'traits': traits})
                                 for traits in written])
        assert [status for status, _ in results] == [204] * THREADS, results
        assert trait_obj.get_for_node(db, node.id) in written


def test_concurrent_replaces_and_removals(world):
    app, db = world
    node = _node(db)
    url = '/v1/nodes/%s/traits' % node.uuid
    written = [_written(index) for index in range(THREADS // 2)] + [[]]
    for _ in range(ROUNDS):
        requests = [('PUT', url, {'traits': traits})
                    for traits in written[:-1]]
        requests += [('DELETE', url, None)] * (THREADS - len(requests))
        results = _at_once(app, requests)
        assert [status for status, _ in results] == [204] * THREADS, results
        assert trait_obj.get_for_node(db, node.id) in written


def test_concurrent_adds_of_one_trait(world):
    app, db = world
    node = _node(db)
    url = '/v1/nodes/%s/traits/CUSTOM_ONE' % node.uuid
    for _ in range(ROUNDS):
        trait_obj.set_for_node(db, node.id, ['CUSTOM_OTHER'])
        results = _at_once(app, [('PUT', url, None)] * THREADS)
        assert [status for status, _ in results] == [204] * THREADS, results
        assert trait_obj.get_for_node(db, node.id) == [
            'CUSTOM_ONE', 'CUSTOM_OTHER']


def test_concurrent_adds_respect_the_limit(world):
    app, db = world
    node = _node(db)
    base = '/v1/nodes/%s/traits/' % node.uuid
    almost = ['CUSTOM_HAVE_%d' % index for index in range(49)]
    trait_obj.set_for_node(db, node.id, almost)
    results = _at_once(app, [('PUT', base + 'CUSTOM_NEW_%d' % index, None)
                             for index in range(THREADS)])
    statuses = sorted(status for status, _ in results)
    assert statuses == [204] + [400] * (THREADS - 1), results
    assert all('at most 50 traits' in body
               for status, body in results if status == 400)
    assert len(trait_obj.get_for_node(db, node.id)) == 50


def test_trait_writes_racing_the_node_deletion(world):
    app, db = world
    for _ in range(ROUNDS * 2):
        node = _node(db)
        url = '/v1/nodes/%s/traits' % node.uuid
        requests = [('PUT', url, {'traits': _written(index)})
                    for index in range(THREADS // 2)]
        requests += [('PUT', url + '/CUSTOM_ADDED_%d' % index, None)
                     for index in range(THREADS // 2 - 1)]
        requests.append(('DELETE', '/v1/nodes/' + node.uuid, None))
        results = _at_once(app, requests)
        assert results[-1][0] == 204, results[-1]
        for status, body in results[:-1]:
            assert status == 204 or (
                status == 404 and node.uuid in body), (status, body)


def test_writes_for_a_deleted_node_are_not_found(world):
    """A node deleted between the API's lookup and the write: 404, where
    the insert used to fail on the foreign key (a 500)."""
    _, db = world
    node = _node(db)
    node.destroy()
    with pytest.raises(exception.NodeNotFound):
        trait_obj.set_for_node(db, node.id, ['CUSTOM_A'])
    with pytest.raises(exception.NodeNotFound):
        trait_obj.add(db, node.id, 'CUSTOM_A')


def test_port_creation_racing_the_node_deletion(world):
    app, db = world
    for round_ in range(ROUNDS * 2):
        node = _node(db)
        requests = [('POST', '/v1/ports', {
            'node_uuid': node.uuid,
            'address': '52:54:00:00:%02x:%02x' % (round_, index)})
            for index in range(THREADS - 1)]
        requests.append(('DELETE', '/v1/nodes/' + node.uuid, None))
        results = _at_once(app, requests)
        assert results[-1][0] == 204, results[-1]
        for status, body in results[:-1]:
            assert status == 201 or (
                status == 400 and 'does not exist' in body), (status, body)
        assert port_obj.Port.list(db, node_id=node.id) == []


def test_port_writes_for_a_deleted_node_are_not_found(world):
    _, db = world
    node, other = _node(db), _node(db)
    port = port_obj.Port.create(db, {'node_id': other.id,
                                     'address': '52:54:00:00:00:01'})
    node.destroy()
    with pytest.raises(exception.NodeNotFound):
        port_obj.Port.create(db, {'node_id': node.id,
                                  'address': '52:54:00:00:00:02'})
    port.node_id = node.id
    with pytest.raises(exception.NodeNotFound):
        port.save()


@pytest.mark.parametrize('statement', ['duplicate', 'reference'])
def test_an_untranslated_conflict_is_a_409(world, statement, caplog):
    """The last line of defence: a constraint conflict that no object
    turned into its own exception is a 409 in Ironic's shape, without the
    values, and the server log has the traceback."""
    app, db = world
    node = _node(db)
    row = {'node_id': node.id, 'trait': 'CUSTOM_SECRET_VALUE',
           'created_at': node.created_at}
    if statement == 'reference':
        row['node_id'] = node.id + 1000

    def write():
        with db.writer() as conn:
            conn.execute(sa.insert(trait_obj.TABLE), [row])
            conn.execute(sa.insert(trait_obj.TABLE), [row])
        return flask.Response(status=204)

    app.add_url_rule('/v1/test-conflict', 'test-conflict', write,
                     methods=['POST'])
    response = app.test_client().post('/v1/test-conflict', headers=V)
    assert response.status_code == 409
    fault = json.loads(response.get_json()['error_message'])
    assert 'concurrent change' in fault['faultstring']
    assert 'SECRET' not in response.get_data(as_text=True)
    assert 'Traceback' in caplog.text


def test_concurrent_attaches_of_one_vif(world, conf):
    """VIFs are written under the node's lock (a conditional UPDATE), so
    they had no such race: one attach wins, the others answer 409 (the VIF
    is attached, or the node was locked through the retries)."""
    app, db = world
    # Lock retries a second apart only make the losers answer later.
    conf.set_override('node_locked_retry_interval', 0.05, group='conductor')
    node = _node(db)
    for index in range(THREADS):
        port_obj.Port.create(db, {'node_id': node.id,
                                  'address': '52:54:00:00:01:%02x' % index})
    results = _at_once(app, [('POST', '/v1/nodes/%s/vifs' % node.uuid,
                              {'id': 'vif-one'})] * THREADS)
    statuses = sorted(status for status, _ in results)
    assert statuses == [204] + [409] * (THREADS - 1), results
    recorded = [port.uuid for port in port_obj.Port.list(db, node_id=node.id)
                if vifs.on_port(port) == 'vif-one']
    assert len(recorded) == 1
