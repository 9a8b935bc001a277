# SPDX-License-Identifier: Apache-2.0
"""Many nodes' inventory changes in one ``POST /reshaper``, and its
fallbacks: a generation conflict in the batch, a Placement whose policy
refuses the reshaper, one that does not serve it; and a batch's rows when
a claim was taken over. Against the real Placement (in-process)."""

import json
import logging

import pytest
import sqlalchemy as sa

from ferrum.objects import base
from ferrum.objects import node as node_obj
from ferrum.placement import audit
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import outbox
from ferrum.placement import service
from ferrum.placement import sync
from ferrum.placement import worker
from tests.functional.placement.deployment import configure
from tests.functional.placement.scenario import assert_no_drift
from tests.functional.placement.scenario import auditor
from tests.functional.placement.scenario import provider
from tests.functional.placement.scenario import reserved


def _pushed_nodes(pconf, db, pclient, count):
    """``count`` available nodes, each pushed once (ferrum then trusts its
    record of each provider), and an outbox that holds only what changes
    from then on."""
    pusher = sync.Pusher(pconf, db, pclient)
    nodes = [node_obj.Node.create(db, {
        'driver': 'fake-hardware', 'resource_class': 'bm',
        'provision_state': 'available', 'power_state': 'power off'})
        for _ in range(count)]
    for node in nodes:
        assert pusher.push(node.uuid) == sync.WRITTEN
    with db.writer() as conn:  # the creations' rows: pushed just now
        conn.execute(sa.delete(outbox.TABLE))
    return nodes


def _maintenance(db, nodes):
    for node in nodes:
        fresh = node_obj.Node.get(db, node.id)
        fresh.maintenance = True
        fresh.save()


def test_inventory_changes_go_in_one_reshape(pconf, db, pclient):
    nodes = _pushed_nodes(pconf, db, pclient, 5)
    _maintenance(db, nodes[:4])
    client = client_mod.PlacementClient(pconf)
    outcomes, rest = sync.Pusher(pconf, db, client).push_batch(
        [node.uuid for node in nodes])
    assert rest == []
    assert outcomes == dict({n.uuid: sync.WRITTEN for n in nodes[:4]},
                            **{nodes[4].uuid: sync.UNCHANGED})
    # The version document, one reshape, one read-back of a generation;
    # no PUT, and nothing for the node that did not change.
    assert client.requests == {'GET': 2, 'POST': 1}
    assert [reserved(pclient, n.uuid) for n in nodes] == [1, 1, 1, 1, 0]
    # The generations ferrum recorded are Placement's: the reconcile's
    # shallow look (generations against records) finds nothing.
    assert audit.drift(auditor(pconf, db, pclient), deep=False) == []
    assert_no_drift(pconf, db, pclient)


def _foreign_trait(pclient, uuid, trait):
    traits = pclient.get('/resource_providers/%s/traits' % uuid)
    pclient.put('/traits/%s' % trait)
    pclient.put('/resource_providers/%s/traits' % uuid, {
        'traits': traits['traits'] + [trait],
        'resource_provider_generation':
            traits['resource_provider_generation']})


def test_a_write_before_the_read_back_leaves_no_generation_trusted(
        pconf, db, pclient):
    nodes = _pushed_nodes(pconf, db, pclient, 3)
    _maintenance(db, nodes)
    client = client_mod.PlacementClient(pconf)
    post = client.post

    def then_a_foreign_write(url, body, **kwargs):
        answer = post(url, body, **kwargs)
        if url == '/reshaper':
            # Another service writes the provider ferrum reads back.
            _foreign_trait(pclient, nodes[0].uuid, 'CUSTOM_FIRST')
        return answer
    client.post = then_a_foreign_write
    outcomes, rest = sync.Pusher(pconf, db, client).push_batch(
        [node.uuid for node in nodes])
    assert rest == [] and set(outcomes.values()) == {sync.WRITTEN}
    # The step read back is 3, not 2: no generation of the batch is
    # trusted, so a later foreign write on another provider is seen...
    _foreign_trait(pclient, nodes[1].uuid, 'CUSTOM_SECOND')
    found = audit.drift(auditor(pconf, db, pclient), deep=False)
    drifted = {d.node_uuid for d in found}
    assert {nodes[0].uuid, nodes[1].uuid} <= drifted
    # ...and the next pushes read first, keeping both foreign traits.
    pusher = sync.Pusher(pconf, db, client)
    for node in nodes:
        pusher.push(node.uuid)
    assert 'CUSTOM_FIRST' in provider(pclient, nodes[0].uuid)[1]
    assert 'CUSTOM_SECOND' in provider(pclient, nodes[1].uuid)[1]
    assert_no_drift(pconf, db, pclient)


def test_one_conflict_fails_the_reshape_and_each_node_is_pushed(
        pconf, db, pclient):
    nodes = _pushed_nodes(pconf, db, pclient, 4)
    # Another service writes one provider: its generation moves.
    uuid = nodes[1].uuid
    traits = pclient.get('/resource_providers/%s/traits' % uuid)
    pclient.put('/traits/CUSTOM_OTHER')
    pclient.put('/resource_providers/%s/traits' % uuid, {
        'traits': traits['traits'] + ['CUSTOM_OTHER'],
        'resource_provider_generation':
            traits['resource_provider_generation']})
    _maintenance(db, nodes)
    client = client_mod.PlacementClient(pconf)
    sync_worker = worker.SyncWorker(
        pconf, db, 'c1', service.PlacementService(pconf, db, client))
    assert sync_worker.drain_once() == 4
    assert outbox.backlog(db).size == 0
    # The failed reshape (all or nothing), then the class once (a new
    # client) and one trusted PUT each; the conflicted one is a 409, is
    # re-read and written again.
    assert client.requests['POST'] == 1
    assert client.requests['PUT'] == 1 + 4 + 1
    assert all(reserved(pclient, n.uuid) == 1 for n in nodes)
    assert 'CUSTOM_OTHER' in provider(pclient, uuid)[1]
    assert_no_drift(pconf, db, pclient)


def test_a_reshaper_refused_by_policy_falls_back_once(pconf, db, pclient,
                                                      caplog):
    from placement.tests.unit import policy_fixture
    # Placement's own default: only the service role may reshape.
    policy_fixture.PolicyFixture.set_rules(
        {'placement:reshaper:reshape': 'role:service'}, overwrite=False)
    nodes = _pushed_nodes(pconf, db, pclient, 6)
    client = client_mod.PlacementClient(pconf)
    sync_worker = worker.SyncWorker(
        pconf, db, 'c1', service.PlacementService(pconf, db, client))
    caplog.set_level(logging.WARNING, logger='ferrum.placement')
    for half in (nodes[:3], nodes[3:]):
        _maintenance(db, half)
        assert sync_worker.drain_once() == 3
    assert client.reshaper_refused is not None
    # Asked once; never again in this process, and not an outage.
    assert client.requests['POST'] == 1
    # The class once, then one trusted PUT per node.
    assert client.requests['PUT'] == 1 + 6
    assert sync_worker.outage.down is None
    assert len([r for r in caplog.records
                if 'POST /reshaper' in r.getMessage()]) == 1
    assert all(reserved(pclient, n.uuid) == 1 for n in nodes)
    assert_no_drift(pconf, db, pclient)


class _BrokenReshaper(client_mod.PlacementClient):
    """A Placement whose reshaper alone fails with a 5xx (as 16.0.0 has
    PostgreSQL-only 500s on other calls); everything else answers."""

    def reshape(self, inventories):
        self.requests['POST'] = self.requests.get('POST', 0) + 1
        raise errors.PlacementUnavailable(
            reason='POST /reshaper answered 500')


def test_a_failing_reshaper_is_no_outage(pconf, db, pclient):
    nodes = _pushed_nodes(pconf, db, pclient, 3)
    _maintenance(db, nodes)
    client = _BrokenReshaper(pconf)
    sync_worker = worker.SyncWorker(
        pconf, db, 'c1', service.PlacementService(pconf, db, client))
    assert sync_worker.drain_once() == 3
    assert client.requests['POST'] == 1
    assert sync_worker.outage.down is None
    assert outbox.backlog(db).size == 0
    assert all(reserved(pclient, n.uuid) == 1 for n in nodes)
    assert_no_drift(pconf, db, pclient)


@pytest.mark.parametrize('served, batches', [('1.29', False),
                                             ('1.30', True)])
def test_the_reshaper_is_used_only_where_served(conf, served, batches):
    """A stand-in answers the version document of a Placement that serves
    up to ``served``; ferrum speaks 1.28 with either."""
    from wsgi_intercept import interceptor

    def placement(environ, start_response):
        start_response('200 OK', [('Content-Type', 'application/json')])
        return [json.dumps({'versions': [{
            'id': 'v1.0', 'min_version': '1.0', 'max_version': served,
            'status': 'CURRENT'}]}).encode()]
    url = 'http://placement-%s.example:8778' % served.replace('.', '-')
    configure(conf, url)
    with interceptor.RequestsInterceptor(lambda: placement, url=url):
        client = client_mod.PlacementClient(conf)
        assert client.check_version() == '1.28'
        assert client.can_reshape() is batches


def test_a_batch_keeps_the_rows_of_a_claim_taken_over(pconf, db):
    nodes = [node_obj.Node.create(db, {'driver': 'fake-hardware'})
             for _ in range(2)]
    stale = base.utcnow()
    heads = outbox.claim(db, 'c1', outbox.heads(db, stale, 10), stale)
    assert len(heads) == 2
    covered = outbox.queued(db, [head.node_uuid for head in heads])
    # The second node's claim went to another conductor meanwhile.
    with db.writer() as conn:
        conn.execute(sa.update(outbox.TABLE).where(
            outbox.TABLE.c.id == heads[1].id).values(claimed_by='c2'))
    held = outbox.finish(db, 'c1', [(head, covered[head.node_uuid])
                                    for head in heads])
    assert held == {heads[0].id}
    left = outbox.queued(db, [node.uuid for node in nodes])
    assert left[heads[0].node_uuid] == []
    assert left[heads[1].node_uuid] == covered[heads[1].node_uuid]
