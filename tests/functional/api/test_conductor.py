# SPDX-License-Identifier: Apache-2.0
"""/v1/conductors: every registered conductor, alive or not (API 1.49+)."""

import datetime
import json
import urllib.parse

import pytest
import sqlalchemy as sa

from ferrum.objects import base
from ferrum.objects import conductor as conductor_obj

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
HOST = 'test-conductor'


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


def _register(db, hostname, group='', hardware_types=()):
    me = conductor_obj.register(db, hostname, group, 60)
    conductor_obj.set_hardware_interfaces(db, me.id, [
        conductor_obj.HardwareInterface(hw_type, 'power', 'fake', True)
        for hw_type in hardware_types])
    return me


def _set_heartbeat(db, hostname, seconds_ago):
    when = base.utcnow() - datetime.timedelta(seconds=seconds_ago)
    with db.writer() as conn:
        conn.execute(sa.update(conductor_obj.TABLE)
                     .where(conductor_obj.TABLE.c.hostname == hostname)
                     .values(heartbeat_at=when))


def _hostnames(response):
    assert response.status_code == 200, response.get_data(as_text=True)
    return [c['hostname'] for c in response.get_json()['conductors']]


@pytest.mark.parametrize('path', ['/v1/conductors',
                                  '/v1/conductors/' + HOST])
def test_before_1_49_the_endpoint_does_not_exist(client, path):
    response = client.get(path, headers={
        'X-OpenStack-Ironic-API-Version': '1.48'})
    assert response.status_code == 404
    assert '1.49' in _fault(response)
    assert client.get(path, headers={
        'X-OpenStack-Ironic-API-Version': '1.49'}).status_code == 200


def test_list_shows_the_started_conductor(client):
    response = client.get('/v1/conductors', headers=V)
    assert response.status_code == 200
    [me] = response.get_json()['conductors']
    assert set(me) == {'hostname', 'conductor_group', 'alive', 'links'}
    assert (me['hostname'], me['conductor_group'], me['alive']) == (
        HOST, '', True)
    assert me['links'][0]['href'].endswith('/v1/conductors/' + HOST)
    assert 'next' not in response.get_json()


def test_detail_and_get(client):
    [listed] = client.get('/v1/conductors?detail=true',
                          headers=V).get_json()['conductors']
    fetched = client.get('/v1/conductors/' + HOST, headers=V).get_json()
    assert listed == fetched
    assert set(fetched) == {'hostname', 'conductor_group', 'alive',
                            'drivers', 'created_at', 'updated_at', 'links'}
    assert fetched['drivers'] == ['fake-hardware']
    created = datetime.datetime.fromisoformat(fetched['created_at'])
    assert created.tzinfo is not None
    assert datetime.datetime.fromisoformat(fetched['updated_at']) >= created


def test_updated_at_is_the_last_heartbeat(client, db):
    _register(db, 'other-host')
    _set_heartbeat(db, 'other-host', 30)
    other = client.get('/v1/conductors/other-host', headers=V).get_json()
    beat = conductor_obj.get(db, 'other-host').heartbeat_at
    assert other['updated_at'] == beat.isoformat() + '+00:00'
    assert other['alive'] is True
    assert _hostnames(client.get(
        '/v1/conductors?sort_key=updated_at', headers=V)) == [
            'other-host', HOST]


def test_a_second_and_a_dead_conductor(client, db):
    _register(db, 'rack2-host', 'rack-2', ['fake-hardware', 'acme-hardware'])
    _register(db, 'dead-host', hardware_types=['fake-hardware'])
    _set_heartbeat(db, 'dead-host', 61)
    conductors = {c['hostname']: c for c in client.get(
        '/v1/conductors?detail=True', headers=V).get_json()['conductors']}
    assert {h: c['alive'] for h, c in conductors.items()} == {
        HOST: True, 'rack2-host': True, 'dead-host': False}
    assert conductors['rack2-host']['conductor_group'] == 'rack-2'
    assert conductors['rack2-host']['drivers'] == [
        'acme-hardware', 'fake-hardware']
    # A dead conductor still shows what it ran.
    assert conductors['dead-host']['drivers'] == ['fake-hardware']
    assert client.get('/v1/conductors/dead-host',
                      headers=V).get_json()['alive'] is False


def test_a_stopped_conductor_is_not_alive(client, db):
    other = _register(db, 'other-host')
    conductor_obj.unregister(db, other.id)
    other_view = client.get('/v1/conductors/other-host', headers=V)
    assert other_view.get_json()['alive'] is False


def test_fields(client):
    [me] = client.get('/v1/conductors?fields=hostname,drivers',
                      headers=V).get_json()['conductors']
    assert set(me) == {'hostname', 'drivers', 'links'}
    assert me['drivers'] == ['fake-hardware']
    one = client.get('/v1/conductors/%s?fields=alive' % HOST,
                     headers=V).get_json()
    assert set(one) == {'alive', 'links'}
    for query in ('fields=hostname&detail=true', 'fields=colour'):
        response = client.get('/v1/conductors?' + query, headers=V)
        assert response.status_code == 400, query


def _follow_next(client, response):
    url = urllib.parse.urlsplit(response.get_json()['next'])
    return client.get('%s?%s' % (url.path, url.query), headers=V)


def test_pagination_follows_next_links(client, db):
    for name in ('c-host', 'a-host', 'b-host'):
        _register(db, name)
    response = client.get('/v1/conductors?limit=2&sort_key=hostname',
                          headers=V)
    assert _hostnames(response) == ['a-host', 'b-host']
    next_url = urllib.parse.urlsplit(response.get_json()['next'])
    assert next_url.path == '/v1/conductors'
    query = urllib.parse.parse_qs(next_url.query)
    assert query['marker'] == ['b-host'] and query['limit'] == ['2']
    assert query['sort_key'] == ['hostname']
    page2 = _follow_next(client, response)
    assert _hostnames(page2) == ['c-host', HOST]
    page3 = _follow_next(client, page2)
    assert _hostnames(page3) == []
    assert 'next' not in page3.get_json()
    assert _hostnames(client.get(
        '/v1/conductors?sort_key=hostname&sort_dir=desc', headers=V)) == [
            HOST, 'c-host', 'b-host', 'a-host']


@pytest.mark.parametrize('query, status, words', [
    ('sort_key=alive', 400, 'alive'),
    ('sort_key=drivers', 400, 'drivers'),
    ('sort_dir=sideways', 400, 'sideways'),
    ('limit=-1', 400, 'limit'),
    ('marker=no-such-host', 404, 'no-such-host'),
])
def test_bad_list_parameters(client, query, status, words):
    response = client.get('/v1/conductors?' + query, headers=V)
    assert response.status_code == status
    assert words in _fault(response)


def test_unknown_conductor_is_an_ironic_404(client):
    response = client.get('/v1/conductors/no-such-host', headers=V)
    assert response.status_code == 404
    fault = json.loads(response.get_json()['error_message'])
    assert fault['faultcode'] == 'Client'
    assert 'no-such-host' in fault['faultstring']
