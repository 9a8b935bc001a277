# SPDX-License-Identifier: Apache-2.0
"""``ferrum-api`` on JSON-RPC in front of two real ``ferrum-conductor``s.

All three processes share one PostgreSQL database and talk over loopback;
the test drives the API with plain HTTP, as a client would.
"""

import json
import signal

import pytest
import requests

from tests.functional.rpc import cluster
from tests.polling import wait_for

HEADERS = cluster.HEADERS
HOSTS = ('conductor-1', 'conductor-2')
_output = cluster.output


@pytest.fixture
def deployment(tmp_path, conf, pg_url):
    """(API URL, conductor processes by host, database)."""
    with cluster.running(tmp_path, conf, pg_url, HOSTS) as running:
        yield running


def _get(url, path):
    response = requests.get(url + path, headers=HEADERS, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def _put(url, path, body):
    return requests.put(url + path, json=body, headers=HEADERS, timeout=30)


def _settled(url, uuid, state):
    def check():
        node = _get(url, '/v1/nodes/%s' % uuid)
        assert node['provision_state'] not in ('deploy failed',
                                               'clean failed'), node
        return (node['provision_state'] == state
                and node['reservation'] is None)
    wait_for(check, timeout=60, what='node %s in %s' % (uuid, state))


def _drive(url, uuid, action, state):
    response = _put(url, '/v1/nodes/%s/states/provision' % uuid,
                    {'target': action})
    assert response.status_code == 202, response.text
    _settled(url, uuid, state)


def _enroll(url, **values):
    response = requests.post(url + '/v1/nodes', headers=HEADERS, timeout=30,
                             json={'driver': 'fake-hardware',
                                   'resource_class': 'gold', **values})
    assert response.status_code == 201, response.text
    return response.json()


def test_api_routes_to_both_conductors(deployment):
    url, procs, _db = deployment
    listed = _get(url, '/v1/conductors')['conductors']
    assert sorted(c['hostname'] for c in listed) == list(HOSTS)

    owners: dict[str, list[str]] = {}
    for _attempt in range(40):
        node = _enroll(url)
        assert node['conductor'] in HOSTS
        owners.setdefault(node['conductor'], []).append(node['uuid'])
        if len(owners) == 2 and min(map(len, owners.values())) >= 2:
            break
    assert set(owners) == set(HOSTS)

    for host in HOSTS:
        first, second = owners[host][:2]
        for uuid in (first, second):
            _drive(url, uuid, 'manage', 'manageable')
            _drive(url, uuid, 'provide', 'available')
        response = _put(url, '/v1/nodes/%s/states/power' % first,
                        {'target': 'power off'})
        assert response.status_code == 202, response.text
        _drive(url, first, 'active', 'active')
        _drive(url, first, 'deleted', 'available')
        assert _get(url, '/v1/nodes/%s' % first)['conductor'] == host

    response = requests.post(url + '/v1/allocations', headers=HEADERS,
                             json={'resource_class': 'gold'}, timeout=30)
    assert response.status_code == 201, response.text
    allocation = response.json()['uuid']
    done = wait_for(lambda: _get(url, '/v1/allocations/%s' % allocation)
                    if _get(url, '/v1/allocations/%s' % allocation)['state']
                    != 'allocating' else None, timeout=60,
                    what='the allocation to finish')
    assert done['state'] == 'active', done
    response = requests.delete(url + '/v1/allocations/%s' % allocation,
                               headers=HEADERS, timeout=30)
    assert response.status_code == 204, response.text
    response = requests.delete(url + '/v1/allocations/%s' % allocation,
                               headers=HEADERS, timeout=30)
    assert response.status_code == 404, response.text

    response = requests.post(url + '/v1/nodes', headers=HEADERS, timeout=30,
                             json={'driver': 'no-such-driver'})
    assert response.status_code == 400, response.text

    # No conductor would manage a node of a group nobody serves.
    response = requests.post(url + '/v1/nodes', headers=HEADERS, timeout=30,
                             json={'driver': 'fake-hardware',
                                   'conductor_group': 'rack9'})
    assert response.status_code == 400, response.text
    fault = json.loads(response.json()['error_message'])
    assert 'conductor group "rack9"' in fault['faultstring']


def test_stopped_conductor_hands_its_nodes_to_the_other(deployment):
    url, procs, _db = deployment
    node = None
    for _attempt in range(40):
        node = _enroll(url)
        if node['conductor'] == HOSTS[1]:
            break
    assert node is not None and node['conductor'] == HOSTS[1]
    proc, output = procs[HOSTS[1]]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0, _output(output)

    def moved():
        return _get(url, '/v1/nodes/%s' % node['uuid'])['conductor'] == (
            HOSTS[0])
    wait_for(moved, timeout=30, what='the node to move to %s' % HOSTS[0])

    def accepted():
        response = _put(url, '/v1/nodes/%s/states/provision' % node['uuid'],
                        {'target': 'manage'})
        # Until the API re-reads the conductors table: 503, never a 500.
        assert response.status_code in (202, 503), response.text
        return response.status_code == 202
    wait_for(accepted, timeout=30, interval=0.2,
             what='the manage call to reach %s' % HOSTS[0])
    _settled(url, node['uuid'], 'manageable')
