# SPDX-License-Identifier: Apache-2.0
"""Node history survives a conductor's SIGKILL.

Two ``ferrum-conductor`` processes and a ``ferrum-api`` on one real
PostgreSQL. Slow fake deploys run on both; one conductor is killed while
its deploys are under way. The other fails its nodes once its heartbeat
stops. Every node's history must then hold exactly what was committed:
a chain of transitions without a gap (each starts where the one before
ended) that ends in the node's state, the killed conductor's entries up to
the kill and the survivor's failure entry after it.
"""

import pytest
import requests
import sqlalchemy as sa

from ferrum.objects import event as event_obj
from tests.functional.rpc import cluster
from tests.polling import wait_for

HOSTS = ('conductor-a', 'conductor-b')
NODES = 10
CONDUCTOR = {'conductor': {
    'check_provision_state_interval': '1',
    'sync_local_state_interval': '1',
    'sync_power_state_interval': '0',
    'heartbeat_timeout': '5'}}
HEADERS = {'X-OpenStack-Ironic-API-Version': '1.78'}


@pytest.fixture
def deployment(tmp_path, conf, pg_url):
    with cluster.running(tmp_path, conf, pg_url, HOSTS, CONDUCTOR) as found:
        yield found


def _nodes(url):
    response = requests.get(url + '/v1/nodes', headers=HEADERS, params={
        'fields': 'uuid,provision_state,reservation,conductor'}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()['nodes']


def _provision(url, uuid, target):
    response = requests.put('%s/v1/nodes/%s/states/provision' % (url, uuid),
                            headers=HEADERS, json={'target': target},
                            timeout=30)
    assert response.status_code == 202, response.text


def _all_settled(url, states):
    nodes = _nodes(url)
    return nodes if all(n['provision_state'] in states
                        and n['reservation'] is None for n in nodes) else None


def _history(db, uuid):
    table = event_obj.TABLE
    with db.engine.connect() as conn:
        return [dict(row) for row in conn.execute(sa.select(table).where(
            table.c.node_uuid == uuid, table.c.event_type == 'transition')
            .order_by(table.c.id)).mappings()]


def test_history_after_a_sigkill_holds_what_was_committed(deployment):
    url, procs, db = deployment
    for _ in range(NODES):
        response = requests.post(url + '/v1/nodes', headers=HEADERS, json={
            'driver': 'fake-hardware',
            'driver_info': {'fake_deploy_seconds': '6'}}, timeout=30)
        assert response.status_code == 201, response.text
    for target, state in (('manage', 'manageable'),
                          ('provide', 'available')):
        for node in _nodes(url):
            _provision(url, node['uuid'], target)
        wait_for(lambda state=state: _all_settled(url, {state}), timeout=60,
                 interval=0.1, what='every node %s' % state)
    for node in _nodes(url):
        _provision(url, node['uuid'], 'active')
    # The conductor that holds the lock of a node being deployed dies.
    busy = wait_for(lambda: [
        n for n in _nodes(url)
        if n['provision_state'] == 'deploying' and n['reservation']],
        timeout=60, interval=0.05, what='a deploy under way')
    killed = busy[0]['reservation']
    (survivor,) = set(HOSTS) - {killed}
    procs[killed][0].kill()
    procs[killed][0].wait()
    caught = [n['uuid'] for n in busy if n['reservation'] == killed]
    nodes = wait_for(lambda: _all_settled(url, {'active', 'deploy failed'}),
                     timeout=90, interval=0.2,
                     what='every node active or failed')
    failed = 0
    for node in nodes:
        entries = _history(db, node['uuid'])
        state = 'enroll'
        for entry in entries:
            assert entry['event'].startswith('Provision state %s -> %s' % (
                state, entry['state'])), (node, entries)
            state = entry['state']
        assert state == node['provision_state'], (node, entries)
        if node['provision_state'] == 'deploy failed':
            failed += 1
            last = entries[-1]
            assert last['conductor'] == survivor
            assert last['severity'] == 'ERROR'
            assert '%s stopped sending heartbeats' % killed in last['event']
            assert entries[-2]['state'] == 'deploying'
            assert entries[-2]['conductor'] == killed
    assert failed >= 1 and set(caught) <= {
        n['uuid'] for n in nodes if n['provision_state'] == 'deploy failed'}
    # The same history through the API (1.78), end to end.
    uuid = caught[0]
    response = requests.get('%s/v1/nodes/%s/history' % (url, uuid),
                            headers=HEADERS, params={'detail': 'true'},
                            timeout=30)
    assert response.status_code == 200, response.text
    shown = response.json()['history']
    assert [e['uuid'] for e in shown if e['event_type'] == 'transition'] == [
        e['uuid'] for e in _history(db, uuid)]
