# SPDX-License-Identifier: Apache-2.0
"""A lease never goes active with fewer nodes than it booked (issue 27):
a node booked by a lease that has not ended cannot be deleted, and a
node lost or unfit at the start (deleted behind ferrum's back, in
maintenance, retired, given another resource class) is substituted or
fails the start, as ``[lease] busy_node_policy`` says. SQLite and
PostgreSQL."""

import concurrent.futures
import datetime

import pytest

from ferrum.leases import engine
from ferrum.leases import selection
from ferrum.leases import start
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj
from ferrum.objects.lease import holds as lease_holds
from tests.functional.leases.sites import fault
from tests.functional.leases.sites import run_and_clean


def _lease(site, uuid):
    return site.client.get('/v1/leases/%s' % uuid).json


def _book(site, count, **values):
    resp = site.post(**dict({'project': 'p', 'resource_class': 'gold',
                             'count': count, 'end': site.later(3600)},
                            **values))
    assert resp.status_code == 201, resp.json
    return resp.json


def _delete_node(site, uuid):
    return site.client.delete('/v1/nodes/%s' % uuid)


def _held_by(site, project='p'):
    return {node.uuid for node in node_obj.Node.list(site.db)
            if node.lessee == project}


def _assert_whole(site, lease):
    """Active, holding as many nodes as it booked, all the lessee's."""
    assert lease['status'] == 'active', lease
    assert len(lease['nodes']) == lease['count']
    assert _held_by(site, lease['project']) == set(lease['nodes'])


@pytest.mark.parametrize('started', [False, True])
def test_deleting_a_booked_node_is_refused(site, started):
    site.nodes(3)
    # A lease to come and a lease starting now (pending until the engine
    # runs, then active).
    if started:
        lease = _book(site, 2)
        engine.run(site.conductor.ctx)
        assert _lease(site, lease['uuid'])['status'] == 'active'
    else:
        lease = _book(site, 2, start=site.later(1800))
    victim = lease['nodes'][0]
    resp = _delete_node(site, victim)
    assert resp.status_code == 409, resp.data
    message = fault(resp)
    assert lease['uuid'] in message and victim in message
    assert 'DELETE /v1/leases/%s' % lease['uuid'] in message
    # Maintenance, which lets an operator delete a node in any state,
    # does not let the lease lose it either.
    node = node_obj.Node.get(site.db, victim)
    node.maintenance = True
    node.save()
    assert _delete_node(site, victim).status_code == 409
    assert site.client.get('/v1/nodes/%s' % victim).status_code == 200
    shown = _lease(site, lease['uuid'])
    assert len(shown['nodes']) == 2
    if started:
        _assert_whole(site, shown)
    # Once the lease gives the node to nobody any more (cancelled, or
    # ending: it waits for the node in maintenance), the node may go,
    # and the end lets it go.
    assert site.client.delete('/v1/leases/%s' % lease['uuid']
                              ).status_code == 204
    engine.run(site.conductor.ctx)
    assert _lease(site, lease['uuid'])['status'] == (
        'ending' if started else 'cancelled')
    assert _delete_node(site, victim).status_code == 204
    if started:
        # The other node is cleaned before it goes back, on a worker: the
        # end waits for it (under load, past one run).
        run_and_clean(site, [node_obj.Node.get(site.db, lease['nodes'][1])])
    else:
        engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == ('ended' if started else 'cancelled'), shown
    assert _held_by(site) == set()


@pytest.mark.parametrize('policy', ['substitute', 'fail'])
def test_the_refusal_names_every_lease_and_advises_by_policy(site, conf,
                                                             policy):
    conf.set_override('busy_node_policy', policy, 'lease')
    (node,) = site.nodes(1)
    leases = [_book(site, 1, start=site.later(1800 + 7200 * i),
                    end=site.later(3600 + 7200 * i)) for i in range(2)]
    resp = _delete_node(site, node.uuid)
    assert resp.status_code == 409, resp.data
    message = fault(resp)
    for lease in leases:
        assert 'DELETE /v1/leases/%s' % lease['uuid'] in message
    assert 'busy_node_policy = %s' % policy in message
    if policy == 'fail':
        # Maintenance would make the start fail, not replace the node.
        assert 'would make a pending lease\'s start fail' in message
        assert 'put the node in maintenance' not in message
    else:
        assert 'replaces it by a free matching node' in message


def test_a_node_of_an_ended_lease_may_be_deleted(site):
    (node,) = site.nodes(1)
    lease = _book(site, 1)
    engine.run(site.conductor.ctx)
    assert site.client.delete('/v1/leases/%s' % lease['uuid']
                              ).status_code == 204
    run_and_clean(site, [node])
    assert _lease(site, lease['uuid'])['status'] == 'ended'
    assert _delete_node(site, node.uuid).status_code == 204


@pytest.mark.parametrize('policy', ['substitute', 'fail'])
@pytest.mark.parametrize('count', [1, 2])
def test_a_node_deleted_behind_the_check(site, conf, policy, count):
    """A node deleted past the API's check (a deletion racing the
    lease's creation, or a tool writing to the database) is gone from
    the lease: the start finds the lease short and applies the policy."""
    conf.set_override('busy_node_policy', policy, 'lease')
    site.nodes(count + 1)
    lease = _book(site, count)
    gone = node_obj.Node.get(site.db, lease['nodes'][0])
    gone.destroy()
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    if policy == 'substitute':
        _assert_whole(site, shown)
        assert gone.uuid not in shown['nodes']
    else:
        assert shown['status'] == 'error', shown
        assert '1 of its %d node' % count in shown['last_error']
        assert 'deleted' in shown['last_error']
        assert 'busy_node_policy is "fail"' in shown['last_error']
        assert _held_by(site) == set()


def test_a_deleted_node_without_substitute_fails_the_start(site):
    site.nodes(2)
    lease = _book(site, 2)
    node_obj.Node.get(site.db, lease['nodes'][1]).destroy()
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'error', shown
    assert 'deleted' in shown['last_error']
    assert 'no free matching node' in shown['last_error']
    assert _held_by(site) == set()


def _maintenance(node):
    node.maintenance = True


def _retired(node):
    node.retired = True


def _reclassed(node):
    node.resource_class = 'silver'


_CHANGES = {'maintenance': (_maintenance, 'in maintenance'),
            'retired': (_retired, 'retired'),
            'resource class': (_reclassed, 'with another resource class')}


@pytest.mark.parametrize('policy', ['substitute', 'fail'])
@pytest.mark.parametrize('change', sorted(_CHANGES))
def test_a_node_unfit_at_the_start(site, conf, policy, change):
    conf.set_override('busy_node_policy', policy, 'lease')
    site.nodes(3)
    lease = _book(site, 2)
    unfit = node_obj.Node.get(site.db, lease['nodes'][0])
    alter, why = _CHANGES[change]
    alter(unfit)
    unfit.save()
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    assert node_obj.Node.get(site.db, unfit.id).lessee is None
    if policy == 'substitute':
        _assert_whole(site, shown)
        assert unfit.uuid not in shown['nodes']
    else:
        assert shown['status'] == 'error', shown
        assert 'node %s' % unfit.uuid in shown['last_error']
        assert why in shown['last_error']
        assert _held_by(site) == set()


@pytest.mark.parametrize('change', sorted(_CHANGES))
def test_an_unfit_node_without_substitute_fails_the_start(site, change):
    site.nodes(2)
    lease = _book(site, 2)
    unfit = node_obj.Node.get(site.db, lease['nodes'][1])
    alter, why = _CHANGES[change]
    alter(unfit)
    unfit.save()
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'error', shown
    assert 'node %s' % unfit.uuid in shown['last_error']
    assert why in shown['last_error']
    assert '"substitute"' in shown['last_error']
    assert _held_by(site) == set()


def test_a_node_deleted_while_a_lease_books_it(site):
    """A deletion that commits between the creator's pick and its insert
    (PostgreSQL: the creator does not hold the SQLite write lock then)
    makes the creator pick again, instead of a 500 or a lease short."""
    if site.backend != 'postgresql':
        pytest.skip('on SQLite the pick and the insert hold the write lock')
    first, second = site.nodes(2)
    attempts = []

    def pick(conn, lease):
        attempts.append(lease.uuid)
        if len(attempts) == 1:
            # Another API request deletes the node just picked.
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(site.conductor.manager.destroy_node,
                            first.id).result(timeout=60)
            return [(first.id, first.uuid)]
        return selection.pick_all(
            conn, selection.Ask.of(lease, lease.start_at, False), 1)

    lease = lease_obj.Lease.create(site.db, {
        'project': 'p', 'resource_class': 'gold', 'count': 1,
        'start_at': site.clock(), 'end_at': site.clock()
        + datetime.timedelta(hours=1), 'cleaning_margin': 0}, pick)
    assert len(attempts) == 2
    assert lease.nodes == [second.uuid]
    assert _lease(site, lease.uuid)['nodes'] == [second.uuid]


def test_a_lease_short_of_nodes_does_not_go_active(site):
    """The last line: the UPDATE that makes a lease active requires it to
    hold every node it booked, whatever the start's checks saw. A node
    lost after them (here: deleted once the start held the nodes) keeps
    the lease starting; the next run substitutes it."""
    ctx = site.conductor.ctx
    site.nodes(3)
    booked = _book(site, 2)
    (lease,) = lease_obj.Lease.claim(site.db, [lease_obj.Lease.get(
        site.db, booked['uuid']).id], 'start', ctx.conductor_id, [])
    assert lease_holds.hold_nodes(site.db, lease.id, lease.node_rows(),
                                 'p') == []
    node_obj.Node.get(site.db, booked['nodes'][0]).destroy()
    assert not start.activate(ctx, lease)
    shown = _lease(site, booked['uuid'])
    assert shown['status'] == 'starting', shown
    assert 'holds 1 of its 2 nodes' in shown['last_error']
    engine.run(ctx)
    _assert_whole(site, _lease(site, booked['uuid']))


def test_a_node_that_lost_a_trait_is_substituted(site):
    site.nodes(3, traits=('CUSTOM_GPU',))
    lease = _book(site, 2, traits=['CUSTOM_GPU'])
    unfit = node_obj.Node.get(site.db, lease['nodes'][1])
    trait_obj.set_for_node(site.db, unfit.id, [])
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    _assert_whole(site, shown)
    assert unfit.uuid not in shown['nodes']
