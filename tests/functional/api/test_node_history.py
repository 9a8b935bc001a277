# SPDX-License-Identifier: Apache-2.0
"""Node history (Ironic's API 1.78): what is recorded, in order, and how
``/v1/nodes/{node}/history`` shows and pages it."""

import pytest
import sqlalchemy as sa

from ferrum.conductor import takeover
from ferrum.conductor import task_manager
from ferrum.objects import event as event_obj
from ferrum.objects import node as node_obj
from tests.functional.api import tenancy
from tests.functional.api.nodes import fault
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state

V78 = {'X-OpenStack-Ironic-API-Version': '1.78'}


def history(client, node, detail=True, **params):
    params.setdefault('detail', str(detail).lower())
    response = client.get('/v1/nodes/%s/history' % node, headers=V78,
                          query_string=params)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def rows(db, node_id):
    """The node's entries as stored, read by a query of the test's own."""
    with db.engine.connect() as conn:
        return [dict(row) for row in conn.execute(sa.select(
            event_obj.TABLE).where(event_obj.TABLE.c.node_id == node_id)
            .order_by(event_obj.TABLE.c.id)).mappings()]


def test_each_provision_state_change_is_an_entry_with_its_outcome(
        client, conductor, db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'active')
    stored = rows(db, node.id)
    transitions = [row for row in stored if row['event_type'] == 'transition']
    # Every change, in order: each entry starts where the previous ended.
    states = [row['state'] for row in transitions]
    assert states[0] == 'verifying' and states[-1] == 'active', states
    assert [s for s in states if s in ('manageable', 'available',
                                       'active')] == [
        'manageable', 'available', 'active']
    for before, after in zip(transitions, transitions[1:], strict=False):
        assert after['event'].startswith(
            'Provision state %s -> %s' % (before['state'], after['state']))
        assert after['duration_seconds'] is not None
    assert {row['severity'] for row in transitions} == {'INFO'}
    assert {row['conductor'] for row in transitions} == {conductor.ctx.host}
    deploying = next(row for row in transitions
                     if row['state'] == 'deploying')
    assert deploying['target_provision_state'] == 'active'
    # The API shows the same entries, in the same order.
    shown = history(client, node.uuid)['history']
    assert [entry['uuid'] for entry in shown] == [row['uuid']
                                                  for row in stored]
    assert shown[-1]['event_type'] == 'transition'
    assert shown[-1]['conductor'] == conductor.ctx.host
    assert set(shown[-1]) == {'uuid', 'created_at', 'severity', 'event',
                              'event_type', 'conductor', 'user', 'links'}


def test_errors_maintenance_and_take_over_are_entries(client, conductor,
                                                      db):
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    response = client.put('/v1/nodes/%s/maintenance' % node.uuid,
                          headers=V78, json={'reason': 'fan replaced'})
    assert response.status_code == 202
    assert client.delete('/v1/nodes/%s/maintenance' % node.uuid,
                         headers=V78).status_code == 202
    with task_manager.acquire(conductor.ctx, node.id, 'test') as task:
        task.node.last_error = 'BMC said no'
    # A deploy that fails: an ERROR entry with the failure's last_error.
    node = node_obj.Node.get(db, node.id)
    node.driver_info = {'fake_fail': ['deploy']}
    node.save()
    conductor.manager.do_provisioning_action(node.uuid, 'provide')
    settled(db, node.id, 'available')
    conductor.manager.do_provisioning_action(node.uuid, 'active')
    failed = settled(db, node.id, 'deploy failed')
    # Take-over: the node's affinity names another conductor.
    node = node_obj.Node.get(db, node.id)
    node.driver_info = {}
    node.provision_state = 'active'
    node.save(conductor_affinity=None)
    takeover.NodeTakeover().sync_local_state(conductor.ctx)
    entries = [(row['event_type'], row['severity'], row['event'])
               for row in rows(db, node.id)]
    kinds = [kind for kind, _severity, _event in entries]
    assert ('maintenance', 'INFO', 'Maintenance on: fan replaced') in entries
    assert ('maintenance', 'INFO', 'Maintenance off') in entries
    assert kinds.index('maintenance') < kinds.index('error')
    assert ('error', 'ERROR', 'BMC said no') in entries
    deploy_failed = [event for kind, severity, event in entries
                     if kind == 'transition' and severity == 'ERROR']
    assert len(deploy_failed) == 1
    assert deploy_failed[0].endswith(': %s' % failed.last_error)
    assert kinds[-1] == 'takeover'
    assert entries[-1][2] == ('Taken over by conductor %s (previous: none)'
                              % conductor.ctx.host)


def test_history_is_gated_at_1_78_as_ironics(client, conductor, db):
    node = enroll(conductor.manager)
    for version in ('1.1', '1.77'):
        response = client.get('/v1/nodes/%s/history' % node.uuid,
                              headers={'X-OpenStack-Ironic-API-Version':
                                       version})
        assert response.status_code == 404, version
    assert client.get('/v1/nodes/%s/history' % node.uuid,
                      headers=V78).get_json() == {'history': []}
    assert client.get('/v1/nodes/%s/history' % node.uuid, headers={
        'X-OpenStack-Ironic-API-Version': 'latest'}).status_code == 200


def test_a_list_cuts_long_events_and_detail_shows_them_whole(
        client, conductor, db):
    node = enroll(conductor.manager)
    long_error = 'x' * 300
    with task_manager.acquire(conductor.ctx, node.id, 'test') as task:
        task.node.last_error = long_error
    (listed,) = history(client, node.uuid, detail=False)['history']
    assert listed['event'] == 'x' * 251 + '...'
    assert set(listed) == {'uuid', 'created_at', 'severity', 'event',
                           'links'}
    (detailed,) = history(client, node.uuid)['history']
    assert detailed['event'] == long_error
    one = client.get('/v1/nodes/%s/history/%s' % (node.uuid, listed['uuid']),
                     headers=V78)
    assert one.status_code == 200
    assert one.get_json() == detailed
    assert listed['links'][0]['href'].endswith(
        '/v1/nodes/%s/history/%s' % (node.uuid, listed['uuid']))


def test_history_pages_with_limit_marker_and_next(client, conductor, db):
    node = enroll(conductor.manager)
    for number in range(7):
        with task_manager.acquire(conductor.ctx, node.id, 'test') as task:
            task.node.last_error = 'error %d' % number
    first = history(client, node.uuid, detail=False, limit=3)
    assert [e['event'] for e in first['history']] == [
        'error 0', 'error 1', 'error 2']
    seen = [e['event'] for e in first['history']]
    url = first['next']
    assert 'limit=3' in url and 'detail=false' in url
    while url:
        page = client.get(url, headers=V78).get_json()
        seen += [e['event'] for e in page['history']]
        url = page.get('next')
    assert seen == ['error %d' % n for n in range(7)]
    backwards = history(client, node.uuid, sort_dir='desc', limit=2)
    assert [e['event'] for e in backwards['history']] == ['error 6',
                                                          'error 5']


@pytest.mark.parametrize('query, status, words', [
    ({'marker': 'nope'}, 400, 'marker must be the UUID'),
    ({'marker': '7c2b6f0c-1b8e-4a51-9a57-1d7a0e6e4b11'}, 404,
     'could not be found'),
    ({'limit': '-1'}, 400, 'limit must be'),
    ({'sort_key': 'event'}, 400, 'not a field to sort by'),
    ({'detail': 'maybe'}, 400, 'true or false'),
])
def test_bad_history_queries_are_clear_errors(client, conductor, db, query,
                                              status, words):
    node = enroll(conductor.manager)
    response = client.get('/v1/nodes/%s/history' % node.uuid, headers=V78,
                          query_string=query)
    assert response.status_code == status
    assert words in fault(response)


def test_one_entry_of_another_node_or_no_entry_is_404(client, conductor,
                                                      db):
    node, other = enroll(conductor.manager), enroll(conductor.manager)
    with task_manager.acquire(conductor.ctx, node.id, 'test') as task:
        task.node.last_error = 'boom'
    (entry,) = history(client, node.uuid)['history']
    response = client.get('/v1/nodes/%s/history/%s' % (other.uuid,
                                                       entry['uuid']),
                          headers=V78)
    assert response.status_code == 404
    assert 'could not be found' in fault(response)
    response = client.get('/v1/nodes/%s/history/not-a-uuid' % node.uuid,
                          headers=V78)
    assert response.status_code == 400


def test_history_off_records_nothing(client, conductor, db, conf):
    db.records_history = False
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    assert rows(db, node.id) == []


def test_the_cleanup_keeps_the_newest_entries_per_node(conductor, db, conf):
    conf.set_override('node_history_max_entries', 3, 'conductor')
    node, other = enroll(conductor.manager), enroll(conductor.manager)
    for number in range(6):
        for target in (node, other):
            with task_manager.acquire(conductor.ctx, target.id,
                                      'test') as task:
                task.node.last_error = 'error %d' % number
    conductor.history_cleanup.prune_history(conductor.ctx)
    for target in (node, other):
        assert [row['event'] for row in rows(db, target.id)] == [
            'error 3', 'error 4', 'error 5']


# ---- policy (the real keystonemiddleware; tenancy.py's personas) ------------

def test_history_needs_the_owners_reader_as_ironics_default(
        ks_client, tokens, db, conductor):
    node = node_obj.Node.create(db, {
        'driver': 'fake-hardware', 'name': 'n', 'owner': tenancy.OWNER,
        'lessee': tenancy.LESSEE})
    with task_manager.acquire(conductor.ctx, node.id, 'test') as task:
        task.node.last_error = 'boom'
    for persona in ('system_reader', 'owner_reader', 'owner_admin'):
        response = ks_client.get('/v1/nodes/n/history',
                                 headers=tenancy.headers(
                                     tokens, persona, **V78))
        assert response.status_code == 200, persona
        (entry,) = response.get_json()['history']
        one = ks_client.get('/v1/nodes/n/history/%s' % entry['uuid'],
                            headers=tenancy.headers(tokens, persona, **V78))
        assert one.status_code == 200, persona
    for persona in ('lessee_reader', 'lessee_admin'):
        response = ks_client.get('/v1/nodes/n/history',
                                 headers=tenancy.headers(
                                     tokens, persona, **V78))
        assert response.status_code == 403, persona
        assert 'baremetal:node:history:get' in tenancy.fault(response)
    # A project that may not see the node learns nothing of it.
    response = ks_client.get('/v1/nodes/n/history', headers=tenancy.headers(
        tokens, 'third_party', **V78))
    assert response.status_code == 404


def test_the_user_who_asked_is_the_entrys_user(ks_client, tokens, db,
                                               conductor):
    """Ironic's ``user``: who asked for the change through the API, the
    work it started included; nobody for what a conductor does of itself.
    The feed shows it only to who may read the node's history."""
    node = node_obj.Node.create(db, {
        'driver': 'fake-hardware', 'name': 'u', 'owner': tenancy.OWNER,
        'lessee': tenancy.LESSEE})
    admin = tenancy.headers(tokens, 'owner_admin', **V78)
    response = ks_client.put('/v1/nodes/u/maintenance', headers=admin,
                             json={'reason': 'fan'})
    assert response.status_code == 202, response.get_data(as_text=True)
    response = ks_client.put('/v1/nodes/u/states/provision', headers=admin,
                             json={'target': 'manage'})
    assert response.status_code == 202, response.get_data(as_text=True)
    settled(db, node.id, 'manageable')
    with task_manager.acquire(conductor.ctx, node.id, 'test') as task:
        task.node.last_error = 'the conductor found this'
    response = ks_client.get('/v1/nodes/u/history?detail=true',
                             headers=tenancy.headers(tokens, 'owner_reader',
                                                     **V78))
    assert response.status_code == 200, response.get_data(as_text=True)
    users = [entry['user'] for entry in response.get_json()['history']]
    assert users == ['user-owner_admin'] * 3 + [None]

    def feed(persona):
        response = ks_client.get('/v1/events?limit=1000',
                                 headers=tenancy.headers(tokens, persona))
        assert response.status_code == 200, response.get_data(as_text=True)
        return [event['user'] for event in response.get_json()['events']
                if event['node_uuid'] == node.uuid]
    assert feed('owner_reader') == users
    assert feed('lessee_reader') == [None] * 4
