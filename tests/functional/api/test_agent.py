# SPDX-License-Identifier: Apache-2.0
"""How drivers' asynchronous work is finished through the API: vendor
passthru, and a ramdisk agent's lookup and heartbeat (fake hardware)."""

import pytest

from ferrum.common import states
from ferrum.objects import agent_token
from ferrum.objects import node as node_obj
from tests.functional.api.nodes import V
from tests.functional.api.nodes import create as _node
from tests.functional.api.nodes import fault as _fault
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state


def _waiting(conductor, db, client, hooks, verb, start):
    node = _node(client, driver_info={'fake_async': hooks})
    to_state(conductor.manager, db, node_obj.Node.get(db, node['uuid']),
             start)
    response = client.put('/v1/nodes/%s/states/provision' % node['uuid'],
                          headers=V, json={'target': verb})
    assert response.status_code == 202
    return node


def _id(db, node):
    return node_obj.Node.get(db, node['uuid']).id


def test_vendor_methods_are_listed_as_ironic_shows_them(client):
    node = _node(client)
    response = client.get('/v1/nodes/%s/vendor_passthru/methods'
                          % node['uuid'], headers=V)
    assert response.status_code == 200
    methods = response.get_json()
    assert methods['finish_wait'] == {
        'http_methods': ['POST'], 'async': False, 'attach': False,
        'description': methods['finish_wait']['description'],
        'require_exclusive_lock': True}
    assert methods['record']['async'] is True


def test_a_synchronous_passthru_answers_200_with_its_result(client):
    node = _node(client)
    response = client.get('/v1/nodes/%s/vendor_passthru?method=status'
                          % node['uuid'], headers=V)
    assert response.status_code == 200
    assert response.get_json() == {'provision_state': 'enroll'}


def test_an_asynchronous_passthru_answers_202(client, db):
    node = _node(client)
    response = client.post('/v1/nodes/%s/vendor_passthru?method=record'
                           % node['uuid'], headers=V,
                           json={'message': 'hello'})
    assert response.status_code == 202
    node = settled(db, _id(db, node), 'enroll')
    assert node.driver_internal_info['fake_vendor_message'] == 'hello'


@pytest.mark.parametrize('query, method, body, expected', [
    ('', 'POST', None, 'needs "?method=<name>"'),
    ('?method=nope', 'POST', None, 'No vendor passthru method "nope"'),
    ('?method=status', 'POST', None, 'does not accept HTTP POST'),
    ('?method=record', 'POST', {'text': 'x'}, 'missing a required'),
    ('?method=record', 'POST', [1], 'a JSON object'),
])
def test_bad_passthru_calls_are_400(client, query, method, body, expected):
    node = _node(client)
    response = client.open('/v1/nodes/%s/vendor_passthru%s'
                           % (node['uuid'], query), method=method,
                           headers=V, json=body)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert expected in _fault(response)


def test_the_passthru_ends_a_deploy_wait(conductor, db, client):
    node = _waiting(conductor, db, client, ['deploy'], 'active',
                    'available')
    settled(db, _id(db, node), states.DEPLOYWAIT)
    response = client.post('/v1/nodes/%s/vendor_passthru?method=finish_wait'
                           % node['uuid'], headers=V)
    assert response.status_code == 200
    settled(db, _id(db, node), states.ACTIVE)


def test_lookup_then_heartbeat_ends_a_clean_wait(conductor, db, client):
    node = _waiting(conductor, db, client, ['erase_devices'], 'provide',
                    'manageable')
    response = client.post('/v1/ports', headers=V, json={
        'node_uuid': node['uuid'], 'address': '52:54:00:12:34:56'})
    assert response.status_code == 201
    settled(db, _id(db, node), states.CLEANWAIT)

    response = client.get('/v1/lookup?addresses=aa:bb:cc:dd:ee:ff,'
                          '52:54:00:12:34:56', headers=V)
    assert response.status_code == 200
    found = response.get_json()
    assert found['node']['uuid'] == node['uuid']
    assert set(found['node']) == {'uuid', 'properties', 'instance_info',
                                  'driver_internal_info'}
    assert found['config']['heartbeat_timeout'] > 0
    token = found['config']['agent_token']
    assert len(token) >= 32 and found['config']['agent_token_required']

    response = client.post('/v1/heartbeat/%s' % node['uuid'], headers=V,
                           json={'callback_url': 'https://10.0.0.5:9999',
                                 'agent_version': '9.0',
                                 'agent_token': token})
    assert response.status_code == 202
    done = settled(db, _id(db, node), states.AVAILABLE)
    assert done.driver_internal_info['fake_agent_url'] == (
        'https://10.0.0.5:9999')
    # The agent's work ended: its session went with it.
    assert agent_token.get(db, done.id) is None


def _heartbeat(client, uuid, **body):
    body.setdefault('callback_url', 'https://127.0.0.1:9999')
    body.setdefault('agent_version', '13.0.0')
    return client.post('/v1/heartbeat/%s' % uuid, headers=V, json=body)


def test_only_the_first_lookup_gets_the_token(conductor, db, client):
    node = _waiting(conductor, db, client, ['deploy'], 'active',
                    'available')
    settled(db, _id(db, node), states.DEPLOYWAIT)
    answers = [client.get('/v1/lookup?node_uuid=%s' % node['uuid'],
                          headers=V).get_json()['config']['agent_token']
               for _ in range(3)]
    assert answers[0] != '******' and answers[1:] == ['******', '******']
    assert agent_token.matches(db, _id(db, node), answers[0])


@pytest.mark.parametrize('given', [None, '', 'wrong-token' * 4])
def test_a_heartbeat_without_the_token_changes_nothing(conductor, db, client,
                                                       given):
    node = _waiting(conductor, db, client, ['deploy'], 'active',
                    'available')
    before = settled(db, _id(db, node), states.DEPLOYWAIT)
    token = client.get('/v1/lookup?node_uuid=%s' % node['uuid'],
                       headers=V).get_json()['config']['agent_token']
    body = {} if given is None else {'agent_token': given}
    response = _heartbeat(client, node['uuid'], **body)
    assert response.status_code == 400
    assert 'agent token' in _fault(response)
    assert token not in response.get_data(as_text=True)
    after = node_obj.Node.get(db, node['uuid'])
    assert after.provision_state == states.DEPLOYWAIT
    assert after.driver_internal_info == before.driver_internal_info


def test_a_heartbeat_over_plain_http_or_from_elsewhere_is_refused(
        conductor, db, client):
    node = _waiting(conductor, db, client, ['deploy'], 'active',
                    'available')
    settled(db, _id(db, node), states.DEPLOYWAIT)
    token = client.get('/v1/lookup?node_uuid=%s' % node['uuid'],
                       headers=V).get_json()['config']['agent_token']
    response = _heartbeat(client, node['uuid'], agent_token=token,
                          callback_url='http://127.0.0.1:9999')
    assert response.status_code == 400 and 'require_tls' in _fault(response)
    stored = node_obj.Node.get(db, node['uuid'])
    stored.driver_internal_info = dict(stored.driver_internal_info,
                                       agent_url='https://127.0.0.1:1')
    stored.save()
    response = _heartbeat(client, node['uuid'], agent_token=token)
    assert response.status_code == 400
    assert 'recorded' in _fault(response)
    assert node_obj.Node.get(db, node['uuid']).provision_state == (
        states.DEPLOYWAIT)


def test_lookup_and_heartbeat_find_only_nodes_an_agent_runs_on(client):
    node = _node(client)
    missing = '8ad1f4ba-0000-4000-8000-000000000000'
    answers = []
    for ident in (node['uuid'], missing):
        response = client.get('/v1/lookup?node_uuid=%s' % ident, headers=V)
        assert response.status_code == 404
        answers.append(_fault(response).replace(ident, 'X'))
        response = client.post('/v1/heartbeat/%s' % ident, headers=V,
                               json={'callback_url': 'http://x:1'})
        assert response.status_code == 404
        answers.append(_fault(response).replace(ident, 'X'))
    # An existing node in another state looks exactly like no node.
    assert len(set(answers)) == 1 and 'provision' not in answers[0]
    response = client.get('/v1/lookup?node_uuid=some-name', headers=V)
    assert response.status_code == 400


def test_lookup_masks_secrets(conductor, db, client):
    node = _waiting(conductor, db, client, ['deploy'], 'active',
                    'available')
    stored = settled(db, _id(db, node), states.DEPLOYWAIT)
    stored.instance_info = {'image_url': 'http://user:pw@h/x',
                            'admin_password': 'hunter2',
                            'configdrive': 'SECRETCD', 'root_gb': 10}
    stored.driver_internal_info = dict(stored.driver_internal_info,
                                       agent_secret_token='t0k3n')
    stored.save()
    token = agent_token.issue(db, stored.id)
    response = client.get('/v1/lookup?node_uuid=%s' % node['uuid'])
    assert response.status_code == 404  # no version header: 1.1
    response = client.get('/v1/lookup?node_uuid=%s' % node['uuid'],
                          headers=V)
    found = response.get_json()['node']
    assert found['instance_info'] == {
        'image_url': '******', 'admin_password': '******',
        'configdrive': '******', 'root_gb': 10}
    assert found['driver_internal_info']['agent_secret_token'] == '******'
    text = response.get_data(as_text=True)
    assert 'hunter2' not in text and token not in text
    # Nor does the node's own API answer carry the token.
    assert token not in client.get('/v1/nodes/%s' % node['uuid'],
                                   headers=V).get_data(as_text=True)


@pytest.mark.parametrize('path, method, body, minor, code', [
    ('/v1/lookup?node_uuid=x', 'GET', None, 21, 404),
    ('/v1/heartbeat/x', 'POST', {'callback_url': 'http://x:1'}, 21, 404),
    ('/v1/heartbeat/x', 'POST', {'callback_url': 'http://x:1',
                                 'agent_version': '1'}, 35, 400),
    ('/v1/heartbeat/x', 'POST', {'callback_url': 'http://x:1',
                                 'agent_token': 't'}, 61, 400),
    ('/v1/lookup', 'GET', None, 65, 400),
    ('/v1/heartbeat/x', 'POST', {}, 65, 400),
])
def test_agent_routes_follow_their_versions(client, path, method, body,
                                            minor, code):
    response = client.open(path, method=method, json=body, headers={
        'X-OpenStack-Ironic-API-Version': '1.%d' % minor})
    assert response.status_code == code, response.get_data(as_text=True)
