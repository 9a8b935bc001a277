# SPDX-License-Identifier: Apache-2.0
"""The /v1/leases API on SQLite and PostgreSQL: all or nothing, windows,
the cleaning margin, extension, early end and cancel, the calendar."""

import datetime

from ferrum.leases import engine
from tests.functional.leases.sites import fault
from tests.functional.leases.sites import iso
from tests.functional.leases.sites import run_and_clean


def test_all_or_nothing(site):
    site.nodes(3, traits=('CUSTOM_GPU',))
    site.nodes(2)
    resp = site.post(project='p1', resource_class='gold', count=4,
                     traits=['CUSTOM_GPU'], end=site.later(3600))
    assert resp.status_code == 409, resp.json
    message = fault(resp)
    assert '5 nodes have resource class "gold"' in message
    assert '2 without trait CUSTOM_GPU' in message
    listed = site.client.get('/v1/leases').json['leases']
    assert listed == []  # nothing was booked
    resp = site.post(project='p1', resource_class='gold', count=3,
                     traits=['CUSTOM_GPU'], end=site.later(3600), name='gpus')
    assert resp.status_code == 201, resp.json
    assert len(resp.json['nodes']) == 3
    assert resp.json['status'] == 'pending'
    again = site.post(project='p2', resource_class='gold', count=1,
                      traits=['CUSTOM_GPU'], end=site.later(3600))
    assert again.status_code == 409
    assert '3 booked by other leases over the window' in fault(again)


def test_bad_input_is_400(site):
    site.nodes(1)
    cases = [
        dict(project='p', resource_class='gold', end=site.later(-10)),
        dict(project='p', resource_class='gold', start=site.later(600),
             end=site.later(300)),
        dict(project='p', resource_class='gold', start=site.later(-3600),
             end=site.later(300)),
        dict(project='p', resource_class='gold', end=site.later(10 ** 8)),
        dict(project='p', resource_class='gold', count=0, end=site.later(60)),
        dict(project='p', resource_class='gold', traits=['gpu'],
             end=site.later(60)),
        dict(project='p', candidate_nodes=['no-such-node'],
             end=site.later(60)),
        dict(project='p', end=site.later(60)),
        dict(project='p', resource_class='gold', end='tomorrow'),
        dict(project='p', resource_class='gold',
             end='9999-12-31T23:59:59-14:00'),
        dict(project='p', resource_class='gold', count=1001,
             end=site.later(60)),
    ]
    for case in cases:
        resp = site.post(**case)
        assert resp.status_code == 400, (case, resp.json)
        assert fault(resp)


def test_cleaning_margin(site, conf):
    conf.set_override('cleaning_margin', 600, 'lease')
    node = site.nodes(1)[0]
    start = site.clock() + datetime.timedelta(hours=1)
    first = site.post(project='a', candidate_nodes=[node.uuid],
                      start=iso(start),
                      end=iso(start + datetime.timedelta(hours=1)))
    assert first.status_code == 201, first.json
    inside = site.post(project='b', candidate_nodes=[node.uuid],
                       start=iso(start + datetime.timedelta(minutes=65)),
                       end=iso(start + datetime.timedelta(hours=3)))
    assert inside.status_code == 409
    after = site.post(project='b', candidate_nodes=[node.uuid],
                      start=iso(start + datetime.timedelta(minutes=70)),
                      end=iso(start + datetime.timedelta(hours=3)))
    assert after.status_code == 201, after.json
    calendar = site.client.get('/v1/nodes/%s/leases' % node.uuid).json
    assert [entry['project'] for entry in calendar['leases']] == ['a', 'b']
    assert len(calendar['free']) == 2  # before the first, after the second


def test_extend_shorten_and_cancel(site):
    a, b = site.nodes(2)
    start = site.clock() + datetime.timedelta(hours=1)
    first = site.post(project='a', candidate_nodes=[a.uuid, b.uuid],
                      start=iso(start),
                      end=iso(start + datetime.timedelta(hours=1))).json
    blocker = site.post(project='b', candidate_nodes=[b.uuid],
                        start=iso(start + datetime.timedelta(hours=2)),
                        end=iso(start + datetime.timedelta(hours=3))).json
    url = '/v1/leases/%s' % first['uuid']
    ok_end = iso(start + datetime.timedelta(minutes=110))
    resp = site.client.patch(url, json=[
        {'op': 'replace', 'path': '/end', 'value': ok_end},
        {'op': 'add', 'path': '/extra/why', 'value': 'longer'}])
    assert resp.status_code == 200, resp.json
    assert resp.json['end'] == ok_end.replace('Z', '+00:00')
    assert resp.json['extra'] == {'why': 'longer'}
    too_far = iso(start + datetime.timedelta(minutes=130))
    resp = site.client.patch(url, json=[
        {'op': 'replace', 'path': '/end', 'value': too_far}])
    assert resp.status_code == 409, resp.json
    resp = site.client.patch(url, json=[
        {'op': 'replace', 'path': '/nodes', 'value': []}])
    assert resp.status_code == 400
    assert site.client.delete(url).status_code == 204
    assert site.client.get(url).json['status'] == 'cancelled'
    # Cancelled: its window is free again.
    resp = site.client.patch('/v1/leases/%s' % blocker['uuid'], json=[
        {'op': 'replace', 'path': '/name', 'value': 'blocker'}])
    assert resp.json['name'] == 'blocker'
    again = site.post(project='c', candidate_nodes=[a.uuid],
                      start=iso(start), end=ok_end)
    assert again.status_code == 201
    assert site.client.delete(url).status_code == 409  # already over


def test_list_filters_and_paging(site):
    nodes = site.nodes(3)
    for index, node in enumerate(nodes):
        site.post(project='p%d' % (index % 2), candidate_nodes=[node.uuid],
                  end=site.later(3600 * (index + 1)))
    get = site.client.get
    assert len(get('/v1/leases?project=p0').json['leases']) == 2
    assert len(get('/v1/leases?node=%s' % nodes[1].uuid).json['leases']) == 1
    assert len(get('/v1/leases?status=pending,active').json['leases']) == 3
    assert get('/v1/leases?status=bogus').status_code == 400
    window = get('/v1/leases?start=%s' % site.later(3 * 3600 - 60)).json
    assert len(window['leases']) == 1
    page = get('/v1/leases?limit=2&fields=uuid,status').json
    assert len(page['leases']) == 2 and 'next' in page
    assert set(page['leases'][0]) == {'uuid', 'status', 'links'}
    doc = get('/v1').json
    assert doc['leases'][0]['href'].endswith('/v1/leases/')


def test_early_end_through_the_engine(site):
    node = site.nodes(1)[0]
    lease = site.post(project='p', candidate_nodes=[node.uuid],
                      end=site.later(3600)).json
    ctx = site.conductor.ctx
    engine.run(ctx)
    shown = site.client.get('/v1/leases/%s' % lease['uuid']).json
    assert shown['status'] == 'active', shown
    assert site.client.delete('/v1/leases/%s' % lease['uuid']).status_code \
        == 204
    run_and_clean(site, [node])
    shown = site.client.get('/v1/leases/%s' % lease['uuid']).json
    assert shown['status'] == 'ended', shown


def test_the_api_decides_windows_by_its_clock(site):
    """The API and the engine read one clock (here a day ahead of the
    wall clock): a lease booked from now starts at the clock's now, and
    its early end is the clock's now too."""
    (node,) = site.nodes(1)
    now = site.clock.advance(86400)
    lease = site.post(project='p', candidate_nodes=[node.uuid],
                      end=site.later(3600)).json
    assert lease['start'] == now.isoformat() + '+00:00', lease
    calendar = site.client.get('/v1/nodes/%s/leases' % node.uuid).json
    assert calendar['start'] == lease['start']
    engine.run(site.conductor.ctx)
    url = '/v1/leases/%s' % lease['uuid']
    assert site.client.get(url).json['status'] == 'active'
    end = site.clock.advance(60)
    assert site.client.delete(url).status_code == 204
    assert site.client.get(url).json['end'] == end.isoformat() + '+00:00'
    run_and_clean(site, [node])
    assert site.client.get(url).json['status'] == 'ended'
