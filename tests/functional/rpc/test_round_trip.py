# SPDX-License-Identifier: Apache-2.0
"""The JSON-RPC client against a real endpoint and conductor in this process.

Objects come back as the types the local transport returns; ferrum
exceptions come back as the same class with the same HTTP code.
"""

import contextlib
import datetime
import socket
import time

import bcrypt
import pytest
import requests

from ferrum import conf as ferrum_conf
from ferrum.common import exception
from ferrum.common import hash_ring
from ferrum.common import http_basic
from ferrum.common import requester
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj
from ferrum.objects import node_history
from ferrum.rpc import client
from ferrum.rpc import server as rpc_server
from ferrum.rpc import wire
from tests.functional.conductor.flows import settled
from tests.functional.rpc.endpoint import serving


@pytest.fixture
def remote(conf, db):
    with serving(conf, db) as (_svc, endpoint):
        yield client.JsonRpcConductorAPI(conf, db), endpoint


def test_node_comes_back_as_a_node(remote, db):
    rpc, _endpoint = remote
    node = rpc.create_node({'driver': 'fake-hardware', 'name': 'n1',
                            'driver_info': {'a': 1}})
    assert isinstance(node, node_obj.Node)
    stored = node_obj.Node.get(db, 'n1')
    assert node.as_dict() == stored.as_dict()
    assert isinstance(node.created_at, datetime.datetime)
    updated = rpc.update_node(node.id, {'description': 'moved'})
    assert updated.description == 'moved' and updated.changes() == {}
    assert rpc.get_supported_boot_devices(node.id)
    assert rpc.validate_driver_interfaces(node.id)['power']['result']


def test_allocation_comes_back_as_an_allocation(remote):
    rpc, _endpoint = remote
    allocation = rpc.create_allocation({'resource_class': 'gold',
                                        'name': 'a1'}, ['CUSTOM_X'])
    assert isinstance(allocation, allocation_obj.Allocation)
    assert (allocation.name, allocation.traits) == ('a1', ['CUSTOM_X'])
    rpc.destroy_allocation('a1')


def test_drivers_async_calls_go_over_json_rpc(remote, db):
    rpc, _endpoint = remote
    node = rpc.create_node({'driver': 'fake-hardware'})
    methods = rpc.get_vendor_passthru_methods(node.id)
    assert methods['status']['http_methods'] == ['GET']
    assert rpc.vendor_passthru(node.id, 'status', 'GET', {}) == {
        'async': False, 'return': {'provision_state': 'enroll'}}
    with pytest.raises(exception.NodeNotWaiting) as caught:
        rpc.heartbeat(node.id, 'http://agent:9999', '9.0')
    assert caught.value.code == 404


def test_the_requesting_user_goes_with_the_call(remote, db):
    """The API request's user crosses to the conductor beside the params
    and names the entries the call records (the work it spawned too)."""
    rpc, _endpoint = remote
    node = rpc.create_node({'driver': 'fake-hardware'})
    with requester.acting_for('user-42', 'project-7'):
        rpc.set_maintenance(node.id, True, 'fan')
        rpc.do_provisioning_action(node.id, 'manage')
    settled(db, node.id, 'manageable')
    rpc.set_maintenance(node.id, False, None)
    entries = node_history.list_for(db, node.id, None)
    assert {row['project_id'] for row in entries[:3]} == {'project-7'}
    users = [(row['event'], row['user_id']) for row in entries]
    assert users == [
        ('Maintenance on: fan', 'user-42'),
        ('Provision state enroll -> verifying (target manageable)',
         'user-42'),
        (users[2][0], 'user-42'),  # verifying -> manageable, in a worker
        ('Maintenance off', None)]
    assert users[2][0].startswith('Provision state verifying -> manageable')


@pytest.mark.parametrize('context', [
    {'user_id': 7}, {'user_id': 'u' * 256, 'project_id': ['p']},
    ['user-1'], 'user-1'])
def test_a_bad_call_context_names_nobody(remote, db, context):
    rpc, endpoint = remote
    node = rpc.create_node({'driver': 'fake-hardware'})
    answer = requests.post(endpoint.url, data=wire.dumps({
        'jsonrpc': '2.0', 'method': 'set_maintenance', 'id': 1,
        'context': context, 'params': {'node_id': node.id, 'enabled': True,
                                       'reason': 'x'}}), timeout=30).json()
    assert 'error' not in answer, answer
    (entry,) = node_history.list_for(db, node.id, None)
    assert (entry['user_id'], entry['project_id']) == (None, None)


def test_node_locked_stays_409(remote, db):
    rpc, _endpoint = remote
    node = rpc.create_node({'driver': 'fake-hardware'})
    node_obj.Node.reserve(db, 'someone-else', node.id)
    with pytest.raises(exception.NodeLocked) as caught:
        rpc.set_maintenance(node.id, True, 'why')
    assert caught.value.code == 409
    assert caught.value.host == 'someone-else'
    assert 'someone-else' in str(caught.value)


def test_not_found_stays_404(remote):
    rpc, _endpoint = remote
    with pytest.raises(exception.AllocationNotFound) as caught:
        rpc.destroy_allocation('no-such-allocation')
    assert caught.value.code == 404
    assert caught.value.allocation == 'no-such-allocation'


def test_unknown_driver_is_400(remote):
    rpc, _endpoint = remote
    with pytest.raises(exception.DriverNotSupported) as caught:
        rpc.create_node({'driver': 'nope'})
    assert caught.value.code == 400


def test_unserved_group_is_400_on_enrolment_and_503_after(remote, db):
    rpc, _endpoint = remote
    with pytest.raises(client.NoConductorInGroup) as caught:
        rpc.create_node({'driver': 'fake-hardware',
                         'conductor_group': 'rack9'})
    assert caught.value.code == 400
    assert '"rack9"' in str(caught.value)
    node = rpc.create_node({'driver': 'fake-hardware'})
    with pytest.raises(client.NoConductorInGroup) as caught:
        rpc.update_node(node.id, {'conductor_group': 'rack9'})
    assert caught.value.code == 400
    # A node whose group lost its conductors: a temporary failure.
    node.conductor_group = 'rack9'
    node.save()
    with pytest.raises(client.NoConductorForNode) as caught:
        rpc.change_node_power_state(node.id, 'power off')
    assert caught.value.code == 503
    assert '"rack9"' in str(caught.value)


def _second(tmp_path):
    """The config of a second conductor on the same database."""
    other = ferrum_conf.new_conf()
    other.set_override('state_path', str(tmp_path))
    other.set_override('host', 'conductor-b')
    return other


def _owned_by(rpc, db, host, count=12):
    """A node the ring gives to ``host``, enrolled through ``rpc``."""
    alive = conductor_obj.alive_drivers(db, 60)
    for _attempt in range(count):
        node = rpc.create_node({'driver': 'fake-hardware'})
        if hash_ring.conductor_for(alive, node.driver, '', node.uuid) == host:
            return node
    raise AssertionError('no node of %s in %d tries' % (host, count))


@contextlib.contextmanager
def _silent_listener():
    """A loopback address that accepts nobody: new connections hang.

    A full accept queue makes Linux drop further connection attempts, as
    a host that is down or cut off does; one unaccepted connection fills
    the queue of a backlog of 0. Yields the address as a URL.
    """
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(0)
    address = listener.getsockname()
    fillers = []
    try:
        for _ in range(2):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(address)
            fillers.append(filler)
        yield 'http://127.0.0.1:%d' % address[1]
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


@pytest.mark.parametrize('how', ['service stopped', 'endpoint gone',
                                 'host silent'])
def test_call_goes_to_the_next_owner_when_a_conductor_is_away(
        conf, db, tmp_path, how):
    # The client keeps its view: only the retry can find the other one.
    conf.set_override('hash_ring_reset_interval', 600)
    conf.set_override('connect_timeout', 0.5, group='json_rpc')
    with serving(conf, db) as (first, endpoint), \
            serving(_second(tmp_path), db), \
            _silent_listener() as silent:
        rpc = client.JsonRpcConductorAPI(conf, db)
        node = _owned_by(rpc, db, conf.host)
        if how == 'service stopped':
            # Offline at once, its endpoint answering "not serving".
            first.stop()
        elif how == 'endpoint gone':
            # Refused connections, while its row still looks alive.
            endpoint.stop()
        else:
            # No answer at all, as from a host that is down while its row
            # still looks alive: only connect_timeout ends the attempt.
            conductor_obj.register(db, conf.host, '', 60, rpc_address=silent)
            rpc = client.JsonRpcConductorAPI(conf, db)
        started = time.monotonic()
        rpc.set_maintenance(node.id, True, 'moved')
        assert node_obj.Node.get(db, node.id).maintenance_reason == 'moved'
        # Well within [json_rpc] timeout (60 s), which a silent host used
        # to cost.
        assert time.monotonic() - started < 10


def test_unreachable_conductor_is_503(remote):
    rpc, endpoint = remote
    node = rpc.create_node({'driver': 'fake-hardware'})
    endpoint.stop()
    with pytest.raises(client.ConductorUnreachable) as caught:
        rpc.set_boot_device(node.id, 'pxe')
    assert caught.value.code == 503


def test_unknown_class_keeps_code_and_message():
    exc = wire.decode_error({'message': 'odd', 'data': {
        'class': 'NotAFerrumClass', 'code': 418, 'kwargs': {'x': 1}}})
    assert type(exc) is exception.FerrumException
    assert (exc.code, str(exc), exc.x) == (418, 'odd', 1)


def test_a_call_larger_than_the_api_accepts_is_refused_unread(conf, db):
    """The API's largest body ([api] max_json_body_size_provision) and an
    envelope: a bigger call is refused (413) before a byte of it is read,
    and the API side names the limit."""
    conf.set_override('max_json_body_size', 4, group='api')
    conf.set_override('max_json_body_size_provision', 8, group='api')
    limit = rpc_server.max_call_size(conf)
    assert limit == 8 * 1024 + 64 * 1024
    node = node_obj.Node.create(db, {'driver': 'fake-hardware'})
    with serving(conf, db) as (_svc, endpoint):
        # A client that claims more than the limit and sends nothing: the
        # answer comes at once (nothing waits for the body).
        host, port = endpoint.url.split('//')[1].rstrip('/').split(':')
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: '
                        b'application/json\r\nContent-Length: %d\r\n\r\n'
                        % (limit + 1))
            head = raw.recv(4096)
        assert head.startswith(b'HTTP/1.1 413'), head[:100]
        assert b'max_json_body_size_provision' in head
        rpc = client.JsonRpcConductorAPI(conf, db)
        with pytest.raises(client.CallTooLarge) as caught:
            rpc.update_node(node.id, {'extra': {'x': 'y' * limit}}, False)
        assert caught.value.code == 413
        assert 'was not read' in str(caught.value)
        # Within the limit, as before.
        updated = rpc.update_node(node.id, {'extra': {'x': 'y' * 1000}},
                                  False)
        assert updated.extra == {'x': 'y' * 1000}


def test_only_listed_methods_are_called():
    answer = rpc_server.handle(None, 'h', b'{"jsonrpc": "2.0", "id": 1, '
                                          b'"method": "__init__"}')
    assert answer['error']['code'] == rpc_server.METHOD_NOT_FOUND
    answer = rpc_server.handle(None, 'h', b'{"jsonrpc": "2.0", "id": 2, '
                                          b'"method": "destroy_node", '
                                          b'"params": {"node_id": 1}}')
    assert answer['error']['data']['code'] == 503


def test_http_basic_refuses_calls_without_the_password(conf, db, tmp_path):
    users = tmp_path / 'htpasswd'
    users.write_text('api:%s\n' % bcrypt.hashpw(
        b'secret', bcrypt.gensalt(4)).decode())
    conf.set_override('auth_strategy', 'http_basic', group='json_rpc')
    conf.set_override('http_basic_username', 'api', group='json_rpc')
    conf.set_override('http_basic_password', 'secret', group='json_rpc')
    with serving(conf, db, str(users)):
        node = client.JsonRpcConductorAPI(conf, db).create_node(
            {'driver': 'fake-hardware'})
        assert node.driver == 'fake-hardware'
        conf.set_override('http_basic_password', 'wrong', group='json_rpc')
        with pytest.raises(client.ConductorUnreachable) as caught:
            client.JsonRpcConductorAPI(conf, db).get_boot_device(node.id)
        assert '401' in str(caught.value)


def test_a_bad_users_file_names_the_json_rpc_option(tmp_path):
    with pytest.raises(http_basic.UserFileInvalid) as caught:
        rpc_server.Application(lambda: None, 'h', str(tmp_path / 'nope'),
                               max_body=1024)
    assert '[json_rpc] http_basic_auth_user_file' in str(caught.value)
    assert '[DEFAULT]' not in str(caught.value)
