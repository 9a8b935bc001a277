# SPDX-License-Identifier: Apache-2.0
"""The engine's batches: many leases claimed by one UPDATE, exactly once
whoever claims at the same time; many ended in one run, each waiting
only for its own nodes; a node of two rows given back once; and the
node pick's plan on PostgreSQL before the tables are analyzed.
"""

import concurrent.futures
import datetime
import threading

import pytest
import sqlalchemy as sa

from ferrum.allocation import allocator
from ferrum.common import states
from ferrum.drivers.fake import interfaces as fake_interfaces
from ferrum.leases import engine
from ferrum.leases import selection
from ferrum.objects import base
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects import node_history
from ferrum.objects.lease import ends as lease_ends
from tests.functional.conductor.flows import resume
from tests.functional.conductor.flows import settled
from tests.functional.leases.sites import FAKE
from tests.functional.leases.sites import run_and_clean
from tests.polling import wait_for

_TABLE = lease_obj.TABLE


def _lease(site, uuid):
    return site.client.get('/v1/leases/%s' % uuid).json


def _book(site, nodes, **values):
    made = []
    for node in nodes:
        resp = site.post(project='tenant', candidate_nodes=[node.uuid],
                         **dict({'end': site.later(3600)}, **values))
        assert resp.status_code == 201, resp.json
        made.append(resp.json)
    return made


def test_racing_claims_take_each_lease_once(site):
    leases = _book(site, site.nodes(12))
    ids = [lease_obj.Lease.get(site.db, lease['uuid']).id
           for lease in leases]
    me = site.conductor.ctx.conductor_id
    due = [_TABLE.c.start_at <= site.clock()]

    def claim(_):
        return [lease.id for lease in lease_obj.Lease.claim(
            site.db, ids, 'start', me, due)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        won = [i for claimed in pool.map(claim, range(4)) for i in claimed]
    assert sorted(won) == sorted(ids)
    assert {lease_obj.Lease.get(site.db, i).status for i in ids} == {
        'starting'}
    # Claimed already: nothing left for a late conductor.
    assert claim(None) == []


def test_a_claim_rechecks_the_condition(site):
    (lease,) = _book(site, site.nodes(1), start=site.later(600))
    lease_id = lease_obj.Lease.get(site.db, lease['uuid']).id
    now = site.clock()
    assert lease_obj.Lease.claim(site.db, [lease_id], 'start',
                                 site.conductor.ctx.conductor_id,
                                 [_TABLE.c.start_at <= now]) == []
    assert _lease(site, lease['uuid'])['status'] == 'pending'


def test_one_run_ends_many_leases_each_waiting_for_its_own(site):
    ctx, manager = site.conductor.ctx, site.conductor.manager
    free = site.nodes(5, extra={'rack': 'r1'})
    (deployed,) = site.nodes(1, driver_info={'fake_async': ['erase_devices']})
    leases = _book(site, free + [deployed])
    engine.run(ctx)
    assert {_lease(site, lease['uuid'])['status'] for lease in leases} == {
        'active'}
    for node in free:
        node = node_obj.Node.get(site.db, node.id)
        node.extra['tenant'] = 'was here'
        node.save()
    manager.do_provisioning_action(deployed.id, 'deploy')
    settled(site.db, deployed.id, states.ACTIVE)

    for lease in leases:
        assert site.client.delete(
            '/v1/leases/%s' % lease['uuid']).status_code == 204
    engine.run(ctx)
    assert 'being undeployed and cleaned' in _lease(
        site, leases[-1]['uuid'])['last_error']
    # The unused nodes are cleaned before they go back, in one run too.
    for node in free:
        settled(site.db, node.id, states.AVAILABLE)
    engine.run(ctx)
    shown = [_lease(site, lease['uuid']) for lease in leases]
    assert [lease['status'] for lease in shown] == ['ended'] * 5 + [
        'ending']
    assert all(lease['last_error'] is None for lease in shown[:5])
    for node in free:
        node = node_obj.Node.get(site.db, node.id)
        assert (node.lessee, node.extra) == (None, {'rack': 'r1'})
    with site.db.reader() as conn:
        holding = conn.execute(sa.select(lease_obj.NODES.c.node_id).where(
            lease_obj.NODES.c.holding)).scalars().all()
    assert holding == [deployed.id]

    node = settled(site.db, deployed.id, states.CLEANWAIT)
    resume(manager, node)
    settled(site.db, deployed.id, states.AVAILABLE)
    engine.run(ctx)
    assert _lease(site, leases[-1]['uuid'])['status'] == 'ended'
    assert node_obj.Node.get(site.db, deployed.id).lessee is None


def test_a_node_in_two_rows_goes_back_once(site):
    (node,) = site.nodes(1)
    first, second = (lease_obj.Lease.get(site.db, lease['uuid']) for lease in
                     _book(site, [node]) + _book(
                         site, [node], start=site.later(7200),
                         end=site.later(9000)))
    engine.run(site.conductor.ctx)
    assert node_obj.Node.get(site.db, node.id).lessee == 'tenant'
    rows = first.node_rows() + second.node_rows()
    assert lease_ends.give_back_all(site.db, rows, site.clock()) == {
        rows[0].id}
    assert node_obj.Node.get(site.db, node.id).lessee is None
    assert [row.id for row in first.node_rows() + second.node_rows()
            ] == [rows[1].id]


def test_the_pick_reads_one_index_entry_for_the_highest_id(pg_db):
    """Fresh tables are not analyzed yet; ``max(id)`` then read every
    entry of the primary key."""
    now = base.utcnow()
    with pg_db.writer() as conn:
        conn.execute(sa.insert(node_obj.TABLE), [
            dict(FAKE, uuid=base.new_uuid(), maintenance=False, retired=False,
                 protected=False, conductor_group='', created_at=now,
                 network_interface='noop') for _ in range(2000)])
    with pg_db.reader() as conn:
        plan = '\n'.join(row[0] for row in conn.exec_driver_sql(
            'EXPLAIN ANALYZE %s' % sa.select(selection._MAX_ID).compile(
                pg_db.engine, compile_kwargs={'literal_binds': True})))
        found = selection.pick(conn, selection.Ask(
            'gold', [], None, None, now, now + datetime.timedelta(hours=1),
            False), 3)
    assert 'Index Only Scan Backward' in plan, plan
    assert 'rows=2000' not in plan, plan
    assert len(found) == 3


def test_the_engine_does_not_wait_for_each_undeploy(site, conf, monkeypatch):
    """One run kicks every deployed node of an ending lease: a tear-down
    that takes long (real hardware) holds up no other node."""
    conf.set_override('action_wait_timeout', 3600, 'conductor')
    ctx, manager = site.conductor.ctx, site.conductor.manager
    nodes = site.nodes(3)
    (lease,) = [site.post(project='tenant', count=3, end=site.later(3600),
                          candidate_nodes=[n.uuid for n in nodes]).json]
    engine.run(ctx)
    for node in nodes:
        manager.do_provisioning_action(node.id, 'deploy')
        settled(site.db, node.id, states.ACTIVE)
    release = threading.Event()

    def slow_tear_down(self, task):
        assert release.wait(60)
    monkeypatch.setattr(fake_interfaces.FakeDeploy, 'tear_down',
                        slow_tear_down)
    assert site.client.delete('/v1/leases/%s' % lease['uuid']
                              ).status_code == 204
    run = threading.Thread(target=engine.run, args=(ctx,))
    try:
        run.start()
        wait_for(lambda: all(
            node_obj.Node.get(site.db, node.id).provision_state
            == states.DELETING for node in nodes),
            what='every node being torn down at once')
    finally:
        release.set()
        if run.is_alive():
            run.join(60)
    for node in nodes:
        settled(site.db, node.id, states.AVAILABLE)
    engine.run(ctx)
    assert _lease(site, lease['uuid'])['status'] == 'ended'


def test_the_projects_next_lease_keeps_the_node(site):
    """Lease B of the same project starts on the node as lease A ends
    (margin 0): B's start takes the node as the project's own, and A's
    end must not clear the lessee under B."""
    (node,) = site.nodes(1, extra={'rack': 'r1'})
    (first,) = _book(site, [node])
    engine.run(site.conductor.ctx)
    # The first lease's tenant leaves a mark in extra.
    used = node_obj.Node.get(site.db, node.id)
    used.extra = dict(used.extra, tenant='was here')
    used.save()
    assert site.client.delete('/v1/leases/%s' % first['uuid']
                              ).status_code == 204
    # Past its end and not yet given back, the node is nobody's to
    # allocate, the project's included: the end would release it.
    refused = allocator.create(site.conductor.ctx, {
        'resource_class': 'gold', 'owner': 'tenant'}, [])
    assert refused.state == 'error', refused.node_id
    (second,) = _book(site, [node])
    engine.run(site.conductor.ctx)
    assert _lease(site, first['uuid'])['status'] == 'ended'
    assert _lease(site, second['uuid'])['status'] == 'active'
    assert node_obj.Node.get(site.db, node.id).lessee == 'tenant'
    with site.db.reader() as conn:
        holding = conn.execute(sa.select(lease_obj.NODES.c.lease_id).where(
            lease_obj.NODES.c.holding)).scalars().all()
    assert holding == [lease_obj.Lease.get(site.db, second['uuid']).id]
    assert site.client.delete('/v1/leases/%s' % second['uuid']
                              ).status_code == 204
    run_and_clean(site, [node])
    assert _lease(site, second['uuid'])['status'] == 'ended'
    back = node_obj.Node.get(site.db, node.id)
    assert back.lessee is None
    # The extra from before the project's first lease, not its tenant's.
    assert back.extra == {'rack': 'r1'}


def test_the_next_lease_keeps_the_node_when_the_clock_reaches_it(site):
    """As above, with both windows ahead and only the clock moving: the
    end decides "the project's next lease has the node" by the engine's
    clock, not by the wall clock (still two hours before that lease)."""
    (node,) = site.nodes(1)
    (first,) = _book(site, [node], start=site.later(3600),
                     end=site.later(7200))
    (second,) = _book(site, [node], start=site.later(7200),
                      end=site.later(10800))
    site.clock.advance(3600)
    engine.run(site.conductor.ctx)
    assert _lease(site, first['uuid'])['status'] == 'active'
    site.clock.advance(3600)
    engine.run(site.conductor.ctx)
    assert _lease(site, first['uuid'])['status'] == 'ended'
    assert _lease(site, second['uuid'])['status'] == 'active'
    assert node_obj.Node.get(site.db, node.id).lessee == 'tenant'
    site.clock.advance(3600)
    run_and_clean(site, [node])
    assert _lease(site, second['uuid'])['status'] == 'ended'
    assert node_obj.Node.get(site.db, node.id).lessee is None


def test_a_pending_next_lease_does_not_take_the_node_over(site):
    """A same-project lease still pending (its start not run yet) may be
    cancelled; the ending lease gives the node back instead of leaving it
    with the project."""
    (node,) = site.nodes(1)
    (first,) = _book(site, [node])
    engine.run(site.conductor.ctx)
    assert site.client.delete('/v1/leases/%s' % first['uuid']
                              ).status_code == 204
    (second,) = _book(site, [node])
    # Only the end runs: the second lease stays pending.
    first_row = lease_obj.Lease.get(site.db, first['uuid'])
    [claimed] = lease_obj.Lease.claim(
        site.db, [first_row.id], 'end', site.conductor.ctx.conductor_id,
        [_TABLE.c.end_at <= site.clock()])
    engine.end_all(site.conductor.ctx, [claimed])
    # Not the project's any more: cleaned before it goes back.
    settled(site.db, node.id, states.AVAILABLE)
    engine.end_all(site.conductor.ctx, [claimed])
    assert _lease(site, first['uuid'])['status'] == 'ended'
    assert _lease(site, second['uuid'])['status'] == 'pending'
    assert node_obj.Node.get(site.db, node.id).lessee is None
    assert site.client.delete('/v1/leases/%s' % second['uuid']
                              ).status_code == 204
    assert node_obj.Node.get(site.db, node.id).lessee is None


def test_a_history_entry_names_its_own_lease_of_two_holding_the_node(site):
    """An early lease holds n1 and n2, a later one n1 as well: the entry
    for (n1, later) names the later lease, not the other lease of the
    batch that holds n1 too."""
    n1, n2 = site.nodes(2)
    early = site.post(project='tenant', candidate_nodes=[n1.uuid, n2.uuid],
                      count=2, start=site.later(60), end=site.later(3600))
    assert early.status_code == 201, early.json
    (late,) = _book(site, [n1], start=site.later(7200),
                    end=site.later(10800))
    early_id = lease_obj.Lease.get(site.db, early.json['uuid']).id
    late_id = lease_obj.Lease.get(site.db, late['uuid']).id
    with site.db.engine.connect() as conn:
        entries = node_history.lease_rows(
            conn, [(n1.id, late_id), (n2.id, early_id)], '%(lease)s')
    assert {entry['node_id']: entry['event'] for entry in entries} == {
        n1.id: late['uuid'], n2.id: early.json['uuid']}


def test_a_revoke_names_the_lease_revoked_for_in_a_mixed_batch(site):
    """Project pa's lease had the node and let it go; pb's lease has it
    now. Revoking both leases at once names pb's lease and lessee in the
    node's history, not pa's, whose row still lists the node."""
    (node,) = site.nodes(1)
    first = site.post(project='pa', candidate_nodes=[node.uuid],
                      end=site.later(3600)).json
    engine.run(site.conductor.ctx)
    site.clock.advance(3700)

    def ended():
        engine.run(site.conductor.ctx)
        return (_lease(site, first['uuid'])['status'] == 'ended'
                and node_obj.Node.get(site.db, node.id).lessee is None)
    wait_for(ended, what='the first lease to end and give the node back')
    second = site.post(project='pb', candidate_nodes=[node.uuid],
                       end=site.later(3600)).json
    engine.run(site.conductor.ctx)
    assert node_obj.Node.get(site.db, node.id).lessee == 'pb'
    ids = [lease_obj.Lease.get(site.db, lease['uuid']).id
           for lease in (first, second)]
    lease_ends.revoke(site.db, ids, site.clock())
    assert node_obj.Node.get(site.db, node.id).lessee is None
    last = node_history.list_for(site.db, node.id, None)[-1]
    assert last['event'] == ('Lease %s ended: project pb is no longer the '
                             'lessee' % second['uuid'])
    assert (last['lessee'], last['lease_uuid']) == ('pb', second['uuid'])


class _CommitsAfterFirst:
    """A connection whose first statement is followed by ``between``, run
    and committed elsewhere before the second starts."""

    def __init__(self, conn, between):
        self._conn, self._between = conn, between

    def execute(self, *args, **kwargs):
        result = self._conn.execute(*args, **kwargs)
        between, self._between = self._between, None
        if between is not None:
            between()
        return result


def test_a_revoke_raced_by_a_commit_names_the_batchs_lease(site):
    """The node's lessee is set again by another transaction between the
    revoke's read of what it revokes and its UPDATE, which PostgreSQL
    lets see that commit: the UPDATE revokes it, and its entry names the
    lease of the batch that holds the node."""
    if site.backend == 'sqlite':
        pytest.skip('on SQLite the revoke holds the write lock: nothing '
                    'commits between its statements')
    (node,) = site.nodes(1)
    (lease,) = _book(site, [node])
    engine.run(site.conductor.ctx)
    assert node_obj.Node.get(site.db, node.id).lessee == 'tenant'
    nodes = node_obj.TABLE

    def set_lessee(value):
        with site.db.engine.begin() as other:
            other.execute(sa.update(nodes).where(nodes.c.id == node.id)
                          .values(lessee=value))
    set_lessee(None)  # cleared by an earlier run of the end
    lease_id = lease_obj.Lease.get(site.db, lease['uuid']).id
    with site.db.writer() as conn:
        lease_ends.revoke_in(
            _CommitsAfterFirst(conn, lambda: set_lessee('tenant')),
            [lease_id], site.clock(), site.db)
    assert node_obj.Node.get(site.db, node.id).lessee is None
    last = node_history.list_for(site.db, node.id, None)[-1]
    assert last['event'] == ('Lease %s ended: project tenant is no longer '
                             'the lessee' % lease['uuid'])
