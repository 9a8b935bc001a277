# SPDX-License-Identifier: Apache-2.0
"""The JSON-RPC client against a real endpoint and conductor in this process.

Objects come back as the types the local transport returns; ferrum
exceptions come back as the same class with the same HTTP code.
"""

import contextlib
import datetime

import bcrypt
import pytest

from ferrum.api import server
from ferrum.common import exception
from ferrum.conductor import service
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj
from ferrum.rpc import client
from ferrum.rpc import server as rpc_server
from ferrum.rpc import wire


@contextlib.contextmanager
def _serving(conf, db, user_file=None):
    conf.set_override('port', 0, group='json_rpc')
    conf.set_override('node_locked_retry_attempts', 1, group='conductor')
    conf.set_override('node_locked_retry_interval', 0, group='conductor')
    svc = service.ConductorService(conf, db=db)
    endpoint = server.APIServer(conf, group='json_rpc', what='JSON-RPC')
    endpoint.start(rpc_server.Application(lambda: svc.manager, conf.host,
                                          user_file))
    svc.start(start_periodics=False, rpc_address=endpoint.url)
    try:
        yield endpoint
    finally:
        svc.stop()
        endpoint.stop()


@pytest.fixture
def remote(conf, db):
    with _serving(conf, db) as endpoint:
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


def test_unserved_group_is_503_naming_it(remote, db):
    rpc, _endpoint = remote
    node = rpc.create_node({'driver': 'fake-hardware',
                            'conductor_group': 'rack9'})
    with pytest.raises(client.NoConductorForNode) as caught:
        rpc.change_node_power_state(node.id, 'power off')
    assert caught.value.code == 503
    assert '"rack9"' in str(caught.value)


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
    with _serving(conf, db, str(users)):
        node = client.JsonRpcConductorAPI(conf, db).create_node(
            {'driver': 'fake-hardware'})
        assert node.driver == 'fake-hardware'
        conf.set_override('http_basic_password', 'wrong', group='json_rpc')
        with pytest.raises(client.ConductorUnreachable) as caught:
            client.JsonRpcConductorAPI(conf, db).get_boot_device(node.id)
        assert '401' in str(caught.value)
