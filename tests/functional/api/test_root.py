# SPDX-License-Identifier: Apache-2.0
"""Version discovery, microversion negotiation and error shapes."""

import json

import pytest

from ferrum.api import microversion

MAX = microversion.as_string(microversion.MAX_VERSION)
#: The first version past the maximum.
PAST_MAX = '1.%d' % (microversion.MAX_VERSION[1] + 1)


def _fault(response):
    return json.loads(response.get_json()['error_message'])


def test_root_document(client):
    response = client.get('/')
    assert response.status_code == 200
    body = response.get_json()
    assert body['default_version']['id'] == 'v1'
    assert body['default_version']['min_version'] == '1.1'
    assert body['default_version']['version'] == MAX
    assert body['versions'][0]['links'][0]['href'].endswith('/v1/')


def test_v1_document_and_version_headers(client):
    response = client.get('/v1/')
    assert response.status_code == 200
    assert response.get_json()['version']['status'] == 'CURRENT'
    assert response.headers['X-OpenStack-Ironic-API-Minimum-Version'] == '1.1'
    assert response.headers['X-OpenStack-Ironic-API-Maximum-Version'] == MAX
    # No version header means the minimum, as in Ironic.
    assert response.headers['X-OpenStack-Ironic-API-Version'] == '1.1'


@pytest.mark.parametrize('headers', [
    {'X-OpenStack-Ironic-API-Version': 'latest'},
    {'OpenStack-API-Version': 'baremetal latest'},
    {'OpenStack-API-Version': 'baremetal %s' % MAX},
])
def test_version_headers_are_honoured(client, headers):
    response = client.get('/v1/nodes', headers=headers)
    assert response.status_code == 200
    assert response.headers['X-OpenStack-Ironic-API-Version'] == MAX
    assert response.headers['OpenStack-API-Version'] == 'baremetal ' + MAX


@pytest.mark.parametrize('version', ['1.999', '2.1', '1.0', PAST_MAX])
def test_unsupported_version_is_406_naming_the_range(client, version):
    response = client.get('/v1/nodes', headers={
        'X-OpenStack-Ironic-API-Version': version})
    assert response.status_code == 406
    assert 'supported version range is: [1.1, %s]' % MAX in (
        _fault(response)['faultstring'])


@pytest.mark.parametrize('version', ['one.two', '01.052', '1.+52',
                                     '1. 5', '1.5.1', '1.052', '+1.5'])
def test_garbage_version_is_406_as_in_ironic(client, version):
    response = client.get('/v1/nodes', headers={
        'X-OpenStack-Ironic-API-Version': version})
    assert response.status_code == 406
    fault = _fault(response)
    assert fault['faultcode'] == 'Client'
    assert 'Invalid value for X-OpenStack-Ironic-API-Version' in (
        fault['faultstring'])


def test_unknown_route_and_method_are_json(client):
    response = client.get('/v1/nowhere')
    assert response.status_code == 404
    assert '/v1/nowhere' in _fault(response)['faultstring']
    response = client.delete('/v1/nodes')
    assert response.status_code == 405
    assert 'GET' in response.headers['Allow']
    assert _fault(response)['faultstring'].startswith('The method DELETE')


def test_unexpected_error_is_a_500_without_details(client, monkeypatch):
    from ferrum.objects import node as node_obj

    def explode(*args, **kwargs):
        raise RuntimeError('internal detail that must not leak')
    monkeypatch.setattr(node_obj.Node, 'list', explode)
    response = client.get('/v1/nodes')
    assert response.status_code == 500
    text = response.get_data(as_text=True)
    assert 'internal detail' not in text and 'Traceback' not in text
    assert _fault(response)['faultcode'] == 'Server'
