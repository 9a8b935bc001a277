# SPDX-License-Identifier: Apache-2.0
"""The conductor's RPC surface is declared once (``rpcapi.ConductorAPI``):
the manager (the local transport), the JSON-RPC server's allow-list and the
JSON-RPC client all follow it, and a server binds parameters by signature."""

import inspect
import json

from ferrum.conductor import manager as manager_mod
from ferrum.conductor import rpcapi
from ferrum.rpc import client as client_mod
from ferrum.rpc import server


def _public(cls):
    return {name for name, value in vars(cls).items()
            if not name.startswith('_') and callable(value)}


def _params(func):
    return list(inspect.signature(func).parameters)


def test_one_surface_everywhere():
    declared = set(rpcapi.METHODS)
    assert declared == _public(rpcapi.ConductorAPI)
    assert declared <= _public(manager_mod.ConductorManager)
    assert _public(client_mod.JsonRpcConductorAPI) == declared


def test_every_implementation_takes_the_declared_parameters():
    for name in rpcapi.METHODS:
        declared = _params(getattr(rpcapi.ConductorAPI, name))
        assert _params(getattr(manager_mod.ConductorManager, name)) == (
            declared), name
        assert _params(getattr(client_mod.JsonRpcConductorAPI, name)) == (
            declared), name


class _Manager:
    """Stands in for the manager in the server's dispatch only."""

    def destroy_node(self, node_id):
        raise KeyError('a bug deep inside')

    def get_boot_device(self, node_id):
        return {'boot_device': 'pxe', 'node': node_id}


def _call(method, params):
    body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': method,
                       'params': params}).encode()
    return server.handle(_Manager(), 'test-host', body)


def test_parameters_are_bound_by_signature():
    assert _call('get_boot_device', {'node_id': 7})['result'] == {
        'boot_device': 'pxe', 'node': 7}
    error = _call('get_boot_device', {})['error']
    assert error['code'] == server.INVALID_PARAMS
    assert 'node_id' in error['message']
    error = _call('get_boot_device', {'node_id': 7, 'extra': 1})['error']
    assert error['code'] == server.INVALID_PARAMS


def test_a_key_error_inside_a_method_is_not_a_missing_parameter():
    error = _call('destroy_node', {'node_id': 7})['error']
    assert error['code'] != server.INVALID_PARAMS
    assert 'Missing parameter' not in error['message']
    assert 'failed unexpectedly' in error['message']


def test_only_declared_methods_are_served():
    error = _call('__init__', {})['error']
    assert error['code'] == server.METHOD_NOT_FOUND


def test_calls_of_too_many_values_are_not_parsed():
    """More values than any body the API accepts (issue 27): a parse
    error before the parser builds them."""
    error = _call('get_boot_device', {'node_id': [0] * 200000})['error']
    assert error['code'] == server.PARSE_ERROR
    assert 'more than 200000 JSON values' in error['message']
    # The most the API lets through, in its envelope, is served.
    assert _call('get_boot_device', {'node_id': [0] * 100000})['result'][
        'node'] == [0] * 100000
