# SPDX-License-Identifier: Apache-2.0
"""Paging through every collection with ``next`` links, in both views.

A client that follows ``next`` must get the same view (``/detail`` or
not), the same filters and the same ``fields`` on every page: a link that
drops ``/detail`` silently hides fields such as ``allocation_uuid`` from
the second page on.
"""

import urllib.parse

import pytest

from ferrum.objects import conductor as conductor_obj

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
MAX_LIMIT = 3
ITEMS = 7  # more than two pages of MAX_LIMIT


@pytest.fixture
def paged(conf, client):
    conf.set_override('max_limit', MAX_LIMIT, group='api')
    return client


def _follow(client, url, key):
    """Every item of a collection, page by page; and every page's URL."""
    items, urls = [], []
    while url is not None:
        urls.append(url)
        response = client.get(url, headers=V)
        assert response.status_code == 200, response.get_data(as_text=True)
        body = response.get_json()
        assert len(body[key]) <= MAX_LIMIT
        items.extend(body[key])
        nxt = body.get('next')
        if nxt is not None:
            parts = urllib.parse.urlsplit(nxt)
            url = parts.path + '?' + parts.query
        else:
            url = None
    return items, urls


def _nodes(client, count, **values):
    uuids = []
    for index in range(count):
        response = client.post('/v1/nodes', headers=V, json=dict(
            values, driver='fake-hardware', name='page-%d' % index))
        assert response.status_code == 201
        uuids.append(response.get_json()['uuid'])
    return uuids


def test_node_detail_pages_keep_detail_and_filters(paged, conductor):
    uuids = _nodes(paged, ITEMS, resource_class='paged')
    for _ in range(2):
        assert paged.post('/v1/nodes', headers=V, json={
            'driver': 'fake-hardware',
            'resource_class': 'other'}).status_code == 201
    items, urls = _follow(paged, '/v1/nodes/detail?resource_class=paged',
                          'nodes')
    assert [n['uuid'] for n in items] == uuids
    # Every page is the detail view: the full set of fields.
    assert all('allocation_uuid' in n and 'driver_info' in n for n in items)
    assert len(urls) == 3
    assert all(u.startswith('/v1/nodes/detail?') for u in urls)
    assert all('resource_class=paged' in u for u in urls)


def test_node_summary_pages_keep_fields(paged, conductor):
    uuids = _nodes(paged, ITEMS)
    items, urls = _follow(paged, '/v1/nodes?fields=uuid,name', 'nodes')
    assert [n['uuid'] for n in items] == uuids
    assert all(set(n) == {'uuid', 'name', 'links'} for n in items)
    assert all(u.startswith('/v1/nodes?') and 'fields=' in u for u in urls)
    items, _ = _follow(paged, '/v1/nodes', 'nodes')
    assert all('driver_info' not in n for n in items) and len(items) == ITEMS


@pytest.mark.parametrize('path', ['/v1/ports', '/v1/ports/detail',
                                  '/v1/nodes/{node}/ports',
                                  '/v1/nodes/{node}/ports/detail'])
def test_port_pages_keep_their_path(paged, conductor, path):
    node = _nodes(paged, 1)[0]
    for index in range(ITEMS):
        assert paged.post('/v1/ports', headers=V, json={
            'node_uuid': node,
            'address': '52:54:00:00:01:%02x' % index}).status_code == 201
    url = path.format(node=node)
    items, urls = _follow(paged, url, 'ports')
    assert len(items) == ITEMS
    assert all(u.split('?')[0] == url for u in urls)
    detail = path.endswith('/detail')
    assert all(('extra' in p) == detail for p in items)


def test_allocation_pages_keep_filters(paged, conductor):
    for index in range(ITEMS):
        assert paged.post('/v1/allocations', headers=V, json={
            'resource_class': 'nothing-%d' % index}).status_code == 201
    items, urls = _follow(paged, '/v1/allocations?state=error&fields=uuid',
                          'allocations')
    assert len(items) == ITEMS
    assert all(set(a) == {'uuid', 'links'} or set(a) == {'uuid'}
               for a in items)
    assert all('state=error' in u for u in urls[1:])


def test_conductor_pages_keep_detail(paged, conductor, db):
    for index in range(ITEMS):
        conductor_obj.register(db, 'paged-%d' % index, '', 60)
    items, urls = _follow(paged, '/v1/conductors?detail=true', 'conductors')
    assert len(items) == ITEMS + 1  # with the test's own conductor
    assert all('drivers' in c for c in items)
    assert all('detail=true' in u for u in urls)
