# SPDX-License-Identifier: Apache-2.0
"""``GET /v1/events`` under tenancy: a project sees the events of nodes
it owned or leased when they happened (a node's errors only if it may
read them on the node), of its allocations and of its leases; a system
reader sees them all. (Order, paging and the lease storm
are in tests/functional/leases/test_event_feed.py.)"""

import pytest

from ferrum.conductor import task_manager
from ferrum.objects import node as node_obj
from tests.functional.api import tenancy
from tests.functional.api.tenancy import headers


def _events(client, tokens, persona):
    response = client.get('/v1/events?limit=1000',
                          headers=headers(tokens, persona))
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()['events']


def _fail(conductor, node, error):
    with task_manager.acquire(conductor.ctx, node.id, 'test') as task:
        task.node.last_error = error


def test_each_project_follows_its_own_events(ks_client, tokens, db,
                                             conductor):
    owned = node_obj.Node.create(db, {'driver': 'fake-hardware',
                                      'owner': tenancy.OWNER})
    leased = node_obj.Node.create(db, {'driver': 'fake-hardware',
                                       'owner': tenancy.OWNER,
                                       'lessee': tenancy.LESSEE})
    other = node_obj.Node.create(db, {'driver': 'fake-hardware',
                                      'owner': tenancy.OTHER})
    _fail(conductor, owned, 'owned error')
    _fail(conductor, leased, 'leased error')
    _fail(conductor, other, 'other error')
    lease = tenancy.book(ks_client, tokens, tenancy.LESSEE, leased.uuid,
                         'l1')
    # The node changes hands: its later events are no longer the lessee's.
    leased = node_obj.Node.get(db, leased.id)
    leased.lessee = None
    leased.save()
    _fail(conductor, leased, 'after the lessee')

    def texts(persona):
        return [e['event'] for e in _events(ks_client, tokens, persona)]
    assert texts('owner_reader') == ['owned error', 'leased error',
                                     'after the lessee']
    # The node's error is the owner's to read, as its last_error is: the
    # lessee sees that an error happened, not what it said.
    assert texts('lessee_reader') == [
        '** Value Redacted - Requires baremetal:node:get:last_error '
        'permission. **', 'Lease %s created' % lease]
    assert texts('third_party') == []
    everything = texts('system_reader')
    assert everything[:3] == ['owned error', 'leased error', 'other error']
    assert len(everything) == 5
    response = ks_client.get('/v1/events', headers=headers(tokens,
                                                          'invalid'))
    assert response.status_code == 401


def test_a_quiet_projects_next_moves_past_the_others_events(
        ks_client, tokens, db, conductor):
    """Its follower would otherwise scan the other projects' events
    again at every poll; it still misses nothing of its own."""
    mine = node_obj.Node.create(db, {'driver': 'fake-hardware',
                                     'owner': tenancy.OWNER})
    other = node_obj.Node.create(db, {'driver': 'fake-hardware',
                                      'owner': tenancy.OTHER})
    _fail(conductor, mine, 'first')
    _fail(conductor, other, 'not mine')

    def page(since, limit=10):
        response = ks_client.get('/v1/events?since=%d&limit=%d' % (
            since, limit), headers=headers(tokens, 'owner_reader'))
        assert response.status_code == 200, response.get_data(as_text=True)
        body = response.get_json()
        return ([e['event'] for e in body['events']],
                int(body['next'].split('since=')[1].split('&')[0]))
    everything = _events(ks_client, tokens, 'system_reader')
    assert page(0) == (['first'], everything[-1]['id'])
    # A full page stops at its last event: the rest is read next time.
    assert page(0, limit=1) == (['first'], everything[-2]['id'])
    _fail(conductor, other, 'still not mine')
    _fail(conductor, mine, 'second')
    assert page(everything[-1]['id'])[0] == ['second']


def test_a_lease_events_user_is_shown_to_that_users_project_only(
        ks_client, tokens, db, conductor):
    """The system admin books a lease for the lessee: the lessee sees the
    lease's events, not the admin's user; a system reader does."""
    node = node_obj.Node.create(db, {'driver': 'fake-hardware',
                                     'owner': tenancy.OWNER})
    lease = tenancy.book(ks_client, tokens, tenancy.LESSEE, node.uuid,
                         'l-user')

    def users(persona):
        return [e['user'] for e in _events(ks_client, tokens, persona)
                if e['lease_uuid'] == lease]
    assert users('system_reader') == ['user-system_admin']
    assert users('lessee_reader') == [None]


@pytest.mark.parametrize('query', [
    'since=-1', 'since=abc', 'since=%C2%B2', 'since=1' + '0' * 30,
    'limit=%C2%B2', 'limit=-3', 'sinse=1'])
def test_a_bad_query_is_a_400_naming_it(client, query):
    response = client.get('/v1/events?' + query)
    assert response.status_code == 400, response.get_data(as_text=True)
    message = response.get_json()['error_message']
    assert ('since' in message or 'limit' in message), message
    assert 'Traceback' not in message


def test_a_huge_limit_is_capped_at_max_limit(client, conf):
    response = client.get('/v1/events?limit=' + '9' * 40)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert len(response.get_json()['events']) <= conf.api.max_limit
