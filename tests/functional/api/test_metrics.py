# SPDX-License-Identifier: Apache-2.0
"""``GET /metrics`` on the API (issue 31): parsed with prometheus_client's
own parser, the fleet gauges equal to what the API lists after a mixed
workload (SQLite and PostgreSQL), request metrics by route template, the
cache, and no secret or identifier in the output.

The Keystone gating and the allowed scrapers are in test_metrics_auth.py.
"""

import collections
import datetime

import pytest
import sqlalchemy as sa
from prometheus_client import parser

from ferrum.api import app as api_app
from ferrum.api import metrics as api_metrics
from ferrum.conductor import service
from ferrum.db import models
from ferrum.objects import node as node_obj
from tests.clocks import Clock
from tests.polling import wait_for

LATEST = {'X-OpenStack-Ironic-API-Version': 'latest'}
SECRET = 'hunter2-not-for-metrics'
FAKE = {'driver': 'fake-hardware', 'power_state': 'power off',
        **{'%s_interface' % kind: 'fake' for kind in (
            'power', 'management', 'boot', 'deploy', 'inspect', 'vendor')}}


def families(text):
    """name -> [(labels, value)] of every sample, by the library's
    parser (which raises on anything malformed)."""
    found = collections.defaultdict(list)
    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            found[sample.name].append((sample.labels, sample.value))
    return found


def scrape(client):
    response = client.get('/metrics')
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers['Content-Type'].startswith('text/plain')
    return response.get_data(as_text=True)


@pytest.fixture(params=['sqlite', 'postgresql'])
def site(request, conf):
    """(API client, database, clock) on SQLite or on the PostgreSQL
    fixture, with the fleet read at every scrape."""
    conf.set_override('fleet_cache_seconds', 0, 'metrics')
    database = request.getfixturevalue(
        'db' if request.param == 'sqlite' else 'pg_db')
    clock = Clock()
    conductor = service.ConductorService(conf, db=database, clock=clock)
    conductor.start(start_periodics=False)
    request.addfinalizer(conductor.stop)
    app = api_app.create_app(conf, database, conductor.manager, clock=clock)
    return app.test_client(), database, clock


def _workload(client, db, clock):
    """Nodes in several states, groups and projects; allocations active
    and failed; leases pending and cancelled."""
    for _ in range(3):
        node_obj.Node.create(db, dict(FAKE, provision_state='available',
                                      resource_class='gold'))
    for _ in range(2):
        node = node_obj.Node.create(db, dict(
            FAKE, provision_state='manageable', resource_class='silver',
            conductor_group=''))
        response = client.put('/v1/nodes/%s/maintenance' % node.uuid,
                              json={'reason': 'fan'}, headers=LATEST)
        assert response.status_code == 202, response.get_data(as_text=True)
    node_obj.Node.create(db, dict(FAKE, provision_state='enroll',
                                  owner='owner-p', lessee='lessee-p',
                                  name='private-name',
                                  driver_info={'ipmi_password': SECRET}))
    node_obj.Node.create(db, dict(FAKE, provision_state='active',
                                  power_state='power on', owner='owner-p',
                                  resource_class='gold'))
    made = [client.post('/v1/allocations', headers=LATEST, json=body)
            for body in ({'resource_class': 'gold'},
                         {'resource_class': 'none-such'})]
    for response in made:
        assert response.status_code == 201, response.get_data(as_text=True)
        ident = response.get_json()['uuid']
        wait_for(lambda ident=ident: client.get(
            '/v1/allocations/%s' % ident, headers=LATEST).get_json()[
                'state'] != 'allocating', what='allocation %s' % ident)
    leases = []
    for project in ('p1', 'p2'):
        response = client.post('/v1/leases', json={
            'project': project, 'resource_class': 'gold', 'count': 1,
            'start': clock.later(3600), 'end': clock.later(7200)})
        assert response.status_code == 201, response.get_data(as_text=True)
        leases.append(response.get_json()['uuid'])
    assert client.delete('/v1/leases/%s' % leases[1]).status_code == 204


def _api_counts(client):
    nodes = client.get('/v1/nodes/detail?limit=1000',
                       headers=LATEST).get_json()['nodes']
    allocations = client.get('/v1/allocations',
                             headers=LATEST).get_json()['allocations']
    leases = client.get('/v1/leases').get_json()['leases']
    conductors = client.get('/v1/conductors',
                            headers=LATEST).get_json()['conductors']
    return {
        'nodes': collections.Counter(
            (n['provision_state'], n['power_state'] or '',
             str(n['maintenance']).lower(), n['resource_class'] or '',
             n['conductor_group']) for n in nodes),
        'projects': collections.Counter(
            (n['owner'] or '', n['lessee'] or '') for n in nodes
            if n['owner'] or n['lessee']),
        'allocations': collections.Counter(a['state'] for a in allocations),
        'leases': collections.Counter(lease['status'] for lease in leases),
        'conductors': collections.Counter(
            c['conductor_group'] for c in conductors if c['alive']),
    }


def _gauge(found, name, *labels):
    return collections.Counter({
        tuple(sample[label] for label in labels): int(value)
        for sample, value in found[name] if value})


def test_gauges_equal_the_api_counts_after_a_mixed_workload(site):
    client, db, clock = site
    _workload(client, db, clock)
    text = scrape(client)
    found = families(text)
    api = _api_counts(client)
    assert _gauge(found, 'ferrum_nodes', *api_metrics._NODE_LABELS) == api[
        'nodes']
    assert sum(api['nodes'].values()) == 7
    assert _gauge(found, 'ferrum_nodes_by_project', 'owner',
                  'lessee') == api['projects'] == {
        ('owner-p', 'lessee-p'): 1, ('owner-p', ''): 1}
    states = _gauge(found, 'ferrum_allocations', 'state')
    assert {(k,): v for k, v in api['allocations'].items()} == states
    assert states == {('active',): 1, ('error',): 1}
    leases = _gauge(found, 'ferrum_leases', 'status')
    assert {(k,): v for k, v in api['leases'].items()} == leases
    assert leases == {('pending',): 1, ('cancelled',): 1}
    assert _gauge(found, 'ferrum_conductors_live', 'conductor_group') == {
        (k,): v for k, v in api['conductors'].items()}
    # Zero-valued states stay present, so panels do not lose the series.
    assert ({'state': 'allocating'}, 0.0) in found['ferrum_allocations']
    assert found['ferrum_placement_outbox_rows'] == [({}, 0.0)]
    # Nothing identifies a node, let alone its secrets.
    for hidden in (SECRET, 'private-name', 'ipmi_password'):
        assert hidden not in text
    for node in node_obj.Node.list(db, {}):
        assert node.uuid not in text


def test_request_metrics_carry_the_route_template(client, db):
    node = node_obj.Node.create(db, dict(FAKE, provision_state='enroll',
                                         name='named-node'))
    assert client.get('/v1/nodes/%s' % node.uuid).status_code == 200
    assert client.get('/v1/nodes/named-node',
                      headers=LATEST).status_code == 200
    assert client.get('/v1/nodes/no-such-node',
                      headers=LATEST).status_code == 404
    assert client.get('/v1/no/such/path').status_code == 404
    assert client.open('/v1/nodes', method='BREW').status_code == 405
    text = scrape(client)
    requests = {(s['route'], s['method'], s['status']): v for s, v in
                families(text)['ferrum_api_requests_total']}
    assert requests[('/v1/nodes/<node_ident>', 'GET', '200')] == 2
    assert requests[('/v1/nodes/<node_ident>', 'GET', '404')] == 1
    assert requests[('unmatched', 'GET', '404')] == 1
    assert requests[('/v1/nodes', 'other', '405')] == 1
    counted = {(s['route'], s['method'], s['status']): v for s, v in
               families(text)['ferrum_api_request_duration_seconds_count']}
    assert counted[('/v1/nodes/<node_ident>', 'GET', '200')] == 2
    for raw in (node.uuid, 'named-node', 'no-such-node', '/v1/no/such'):
        assert raw not in text


def test_openmetrics_on_request(client):
    response = client.get('/metrics', headers={
        'Accept': 'application/openmetrics-text; version=1.0.0'})
    assert response.headers['Content-Type'].startswith(
        'application/openmetrics-text')
    assert response.get_data(as_text=True).endswith('# EOF\n')


def test_the_fleet_is_read_in_three_statements_and_cached(conf, db):
    conf.set_override('fleet_cache_seconds', 10, 'metrics')
    now = [100.0]
    collector = api_metrics.FleetCollector(conf, db, monotonic=lambda: now[0])
    statements = []

    def count(_conn, _cursor, statement, *_args):
        # SQLite's explicit BEGIN (ferrum.db.api) is no query.
        if statement != 'BEGIN':
            statements.append(statement)
    sa.event.listen(db.engine, 'before_cursor_execute', count)
    try:
        first = list(collector.collect())
        assert len(statements) == 3, statements
        node_obj.Node.create(db, dict(FAKE, provision_state='enroll'))
        statements.clear()
        now[0] += 9.9
        cached = list(collector.collect())
        assert statements == []
        assert cached[0].samples == first[0].samples == []
        now[0] += 0.1
        fresh = list(collector.collect())
        assert len(statements) == 3
        assert [s.value for s in fresh[0].samples] == [1]
    finally:
        sa.event.remove(db.engine, 'before_cursor_execute', count)


def test_outbox_backlog_and_the_oldest_rows_age(conf, db):
    from ferrum.objects import base
    # [placement] on: node writes are queued.
    conf.set_override('auth_type', 'admin_token', group='placement')
    for _ in range(2):
        node_obj.Node.create(db, dict(FAKE, provision_state='enroll'))
    table = models.PlacementOutbox.__table__
    with db.writer() as conn:
        first = conn.execute(sa.select(sa.func.min(table.c.id))).scalar()
        conn.execute(sa.update(table).where(table.c.id == first).values(
            created_at=base.utcnow() - datetime.timedelta(hours=1)))
    collector = api_metrics.FleetCollector(conf, db)
    samples = {m.name: m.samples[0].value for m in collector.collect()
               if m.samples and not m.samples[0].labels}
    assert samples['ferrum_placement_outbox_rows'] == 2
    assert 3600 <= samples[
        'ferrum_placement_outbox_oldest_age_seconds'] < 3600 + 120


def test_the_all_in_one_serves_its_conductors_metrics(conf, db):
    from ferrum.api import local
    backend = local.LocalAPI(conf, db)
    client = backend.start().test_client()
    try:
        names = {family.name for family in
                 parser.text_string_to_metric_families(scrape(client))}
    finally:
        backend.stop()
    assert {'ferrum_nodes', 'ferrum_periodic_task_duration_seconds',
            'ferrum_driver_call_errors',
            'ferrum_placement_push_duration_seconds'} <= names
    # An API without a conductor in its process serves the fleet only.
    fleet_only = {family.name for family in
                  parser.text_string_to_metric_families(scrape(
                      api_app.create_app(conf, db, None).test_client()))}
    assert 'ferrum_nodes' in fleet_only
    assert 'ferrum_driver_call_errors' not in fleet_only
