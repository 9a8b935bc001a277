# SPDX-License-Identifier: Apache-2.0
"""Leases in the real Placement (in-process): what a start costs, the
busy-node policy "fail", and the order of the end with a foreign consumer
of the lease's reservation class. The races run under gunicorn
(test_lease_placement_processes)."""

import functools
import uuid

import pytest

from ferrum.leases import engine
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.placement import audit
from ferrum.placement import errors
from ferrum.placement import reservations
from ferrum.placement import worker
from ferrum.placement.resources import providers
from tests.functional.placement.scenario import PROJECT
from tests.functional.placement.scenario import RC
from tests.functional.placement.scenario import agrees
from tests.functional.placement.scenario import auditor
from tests.functional.placement.scenario import book
from tests.functional.placement.scenario import claim_posts
from tests.functional.placement.scenario import classes
from tests.functional.placement.scenario import consumer_body
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import foreign_claim
from tests.functional.placement.scenario import holders
from tests.functional.placement.scenario import make_api
from tests.functional.placement.scenario import nodes
from tests.functional.placement.scenario import put_consumer
from tests.functional.placement.scenario import resources
from tests.functional.placement.scenario import writes
from tests.polling import wait_for


def test_a_start_costs_one_claim_whatever_its_size(
        backend, db, pconf, pclient, calls):
    nodes(db, 41)
    api = make_api(pconf, db, backend.manager)
    posts = []
    for count in (1, 10, 30):
        lease_uuid, _nodes = book(api, count, project='p%d' % count)
        since = len(calls)
        engine.run(backend.ctx)
        posts.append(claim_posts(calls, since))
        lease = agrees(db, pclient, lease_uuid)
        assert lease.status == 'active', lease.last_error
    assert posts == [1, 1, 1]


def test_a_busy_node_fails_the_start_with_policy_fail(
        backend, db, pconf, pclient, calls):
    nodes(db, 4)
    pconf.set_override('busy_node_policy', 'fail', group='lease')
    api = make_api(pconf, db, backend.manager)
    lease_uuid, booked = book(api, 3)
    nova = foreign_claim(pclient, booked[1])
    since = len(calls)
    engine.run(backend.ctx)
    lease = agrees(db, pclient, lease_uuid)
    assert lease.status == 'error'
    assert booked[1] in lease.last_error
    assert 'held by another consumer in Placement' in lease.last_error
    # One claim, refused, and nothing of it left behind: the foreign
    # consumer keeps its node, the others are nobody's.
    assert claim_posts(calls, since) == 1
    assert holders(pclient, booked[1]) == {nova}
    for node in set(booked) - {booked[1]}:
        assert holders(pclient, node) == set()
    converged(db)
    for node in booked:
        assert set(pclient.get('/resource_providers/%s/inventories'
                               % node)['inventories']) == {RC}
    # The failed lease keeps its window until it is deleted; then its
    # class goes.
    name = reservations.class_name(lease_uuid)
    assert name in classes(pclient)
    assert api.delete('/v1/leases/%s' % lease_uuid).status_code == 204
    wait_for_end(backend, db, lease_uuid)
    engine.run(backend.ctx)
    assert name not in classes(pclient)
    assert audit.drift(auditor(pconf, db, pclient, True), deep=True) == []


def test_a_substitute_is_a_node_placement_has_free(
        backend, db, pconf, pclient, calls):
    made = nodes(db, 8)
    api = make_api(pconf, db, backend.manager)
    lease_uuid, booked = book(api, 2)
    spares = [node.uuid for node in made if node.uuid not in booked]
    # Another service holds the busy node and all spares but one: free
    # in ferrum's database, not in Placement.
    for node in [booked[0], *spares[1:]]:
        foreign_claim(pclient, node)
    since = len(calls)
    engine.run(backend.ctx)
    lease = agrees(db, pclient, lease_uuid)
    assert lease.status == 'active', lease.last_error
    assert set(lease.nodes) == {booked[1], spares[0]}
    # The refused round, then the substitute's: one request each.
    assert claim_posts(calls, since) == 2


def _end_before(backend, api, db, lease_uuid, staged, pushed=False):
    """An observer of the conductor's Placement client that ends the
    lease (as another conductor would) just before the first request
    ``staged(method, url, body)`` picks is sent; ``ended`` says it did.
    With ``pushed`` the sync worker also pushes what the end queued
    before that request goes."""
    ended = []

    def observe(method, url, body):
        if ended or not staged(method, url, body):
            return
        ended.append((method, url))
        assert api.delete('/v1/leases/%s' % lease_uuid).status_code == 204
        wait_for_end(backend, db, lease_uuid)
        if pushed:
            converged(db)

    backend.placement.client.observers.append(observe)
    return ended


def _allocated_in_lease(backend, db, pconf, count):
    """``count`` nodes, a running lease of two of them, and an active
    allocation of the lease's project on one: (api, lease uuid, the
    leased nodes, the allocation)."""
    nodes(db, count)
    api = make_api(pconf, db, backend.manager)
    lease_uuid, booked = book(api, 2)
    engine.run(backend.ctx)
    converged(db)
    alloc = backend.manager.create_allocation(
        {'resource_class': 'bm', 'owner': PROJECT}, [])
    assert alloc.state == 'active', alloc.last_error
    return api, lease_uuid, booked, alloc


def test_a_consumer_another_service_took_meanwhile_is_not_given_back(
        backend, db, pconf, pclient):
    """The release read ferrum's consumer under a running lease; before
    the give-back's own read, the consumer was emptied and made again by
    another service: the give-back must not empty it."""
    _api, _lease, booked, alloc = _allocated_in_lease(backend, db, pconf, 3)
    (spare,) = {node.uuid for node in node_obj.Node.list(db)} - set(booked)
    reads = []

    def take_over(method, url, body):
        if method != 'GET' or url != '/allocations/%s' % alloc.uuid:
            return
        reads.append(url)
        if len(reads) == 2:  # the give-back's read, after the release's
            held = consumer_body(pclient, alloc.uuid)
            pclient.put(url, {'allocations': {}, 'project_id': PROJECT,
                              'user_id': held['user_id'],
                              'consumer_generation':
                                  held['consumer_generation']})
            foreign_claim(pclient, spare, alloc.uuid)

    backend.placement.client.observers.append(take_over)
    backend.manager.destroy_allocation(alloc.uuid)
    backend.placement.client.observers.remove(take_over)
    assert len(reads) >= 2
    assert holders(pclient, spare) == {alloc.uuid}
    assert consumer_body(pclient, alloc.uuid).get('user_id') == 'nova-user'


def test_a_give_back_racing_the_end_leaves_no_claim(
        backend, db, pconf, pclient):
    api, lease_uuid, _booked, alloc = _allocated_in_lease(
        backend, db, pconf, 2)
    # The allocation's release found its lease running; before it gives
    # the node back to the lease's consumer, the lease ends and its nodes
    # are pushed (their reservation inventory is still in use then).
    ended = _end_before(backend, api, db, lease_uuid, functools.partial(
        writes, alloc.uuid), pushed=True)
    backend.manager.destroy_allocation(alloc.uuid)
    assert ended
    assert lease_obj.Lease.get(db, lease_uuid).status == 'ended'
    # Nothing holds the nodes: the late give-back left no claim to a
    # lease that is over.
    assert resources(pclient, alloc.uuid) == {}
    assert resources(pclient, lease_uuid) == {}
    converged(db)
    engine.run(backend.ctx)
    assert reservations.class_name(lease_uuid) not in classes(pclient)
    assert audit.drift(auditor(pconf, db, pclient, True), deep=True) == []


def test_a_take_racing_the_end_leaves_no_claim(
        backend, db, pconf, pclient):
    nodes(db, 2)
    api = make_api(pconf, db, backend.manager)
    lease_uuid, _booked = book(api, 2)
    name = reservations.class_name(lease_uuid)
    engine.run(backend.ctx)
    converged(db)
    # The allocation found the node's lease running; before it takes the
    # node from the lease's consumer, the lease ends.
    ended = _end_before(backend, api, db, lease_uuid, functools.partial(
        writes, lease_uuid))
    alloc = backend.manager.create_allocation(
        {'resource_class': 'bm', 'owner': PROJECT}, [])
    assert ended
    assert lease_obj.Lease.get(db, lease_uuid).status == 'ended'
    # The node left the lessee before ferrum's database took it: the
    # allocation fails, and nothing holds the class of a lease that is
    # over.
    assert alloc.state == 'error'
    assert resources(pclient, lease_uuid) == {}
    assert resources(pclient, alloc.uuid) == {}
    converged(db)
    engine.run(backend.ctx)
    assert name not in classes(pclient)
    assert audit.drift(auditor(pconf, db, pclient, True), deep=True) == []


def test_a_node_missing_in_placement_holds_the_start_back(
        backend, db, pconf, pclient, calls):
    nodes(db, 3)
    api = make_api(pconf, db, backend.manager)
    over_uuid, _nodes = book(api, 1, project='other')
    engine.run(backend.ctx)
    lease_uuid, booked = book(api, 2)
    # Its provider is gone (deleted behind ferrum's back, or not synced
    # yet): Placement refuses the claim with a 400 naming no holder.
    pclient.delete('/resource_providers/%s' % booked[0])
    # The engine ends the other lease after the starts, in the same run.
    assert api.delete('/v1/leases/%s' % over_uuid).status_code == 204
    since = len(calls)
    engine.run(backend.ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'starting'
    assert 'waiting for Placement' in lease.last_error
    assert booked[0] in lease.last_error
    # The start's claim, tried once a run, and the other lease's release.
    assert claim_posts(calls, since) == 2
    assert resources(pclient, lease_uuid) == {}
    # The rest of the run went on.
    assert lease_obj.Lease.get(db, over_uuid).status == 'ended'
    # The reconcile creates the provider again; the next run starts it.
    worker.Reconcile(backend.placement).reconcile_placement(backend.ctx)
    converged(db)
    engine.run(backend.ctx)
    lease = agrees(db, pclient, lease_uuid)
    assert lease.status == 'active', lease.last_error
    assert set(lease.nodes) == set(booked)


def left_behind(client, consumer):
    """Make ``consumer`` what a write Placement refused with a 400 leaves:
    an empty consumer at generation 0, shown without a generation."""
    body = {consumer: {'allocations': {str(uuid.uuid4()): {
        'resources': {RC: 1}}}, 'consumer_generation': None,
        'project_id': PROJECT, 'user_id': 'ferrum'}}
    with pytest.raises(errors.PlacementRefused) as caught:
        client.post('/allocations', body)
    assert caught.value.status == 400
    assert consumer_body(client, consumer) == {'allocations': {}}


def test_a_take_claims_a_consumer_a_refused_write_left(
        backend, db, pconf, pclient):
    nodes(db, 2)
    api = make_api(pconf, db, backend.manager)
    lease_uuid, _booked = book(api, 2)
    engine.run(backend.ctx)
    chosen = str(uuid.uuid4())
    left_behind(pclient, chosen)
    alloc = backend.manager.create_allocation(
        {'uuid': chosen, 'resource_class': 'bm', 'owner': PROJECT}, [])
    assert alloc.state == 'active', alloc.last_error
    name = reservations.class_name(lease_uuid)
    assert resources(pclient, chosen) == {alloc.node_uuid: {RC: 1, name: 1}}


def _untouched(client, consumer):
    """What a write to a consumer would change (not its providers'
    generations, which inventory writes move)."""
    found = consumer_body(client, consumer)
    return (resources(client, consumer), found['consumer_generation'],
            found['project_id'], found['user_id'])


def _usages(client, node):
    return client.get('/resource_providers/%s/usages' % node)['usages']


def test_the_end_order_with_a_foreign_consumer_of_the_class(
        backend, db, pconf, pclient, calls):
    nodes(db, 3)
    api = make_api(pconf, db, backend.manager)
    lease_uuid, _booked = book(api, 3)
    name = reservations.class_name(lease_uuid)
    engine.run(backend.ctx)
    lease = agrees(db, pclient, lease_uuid)
    assert lease.status == 'active', lease.last_error
    converged(db)
    alloc = backend.manager.create_allocation(
        {'resource_class': 'bm', 'owner': PROJECT}, [])
    assert alloc.state == 'active', alloc.last_error
    # A nova flavor with resources:CUSTOM_RESERVATION_<X>=1.
    (offered, *_rest) = providers.allocation_candidates(pclient, name)
    assert offered != alloc.node_uuid
    foreign = str(uuid.uuid4())
    put_consumer(pclient, foreign, offered, name, 'nova-project',
                 'nova-user')
    before = _untouched(pclient, foreign)
    assert api.delete('/v1/leases/%s' % lease_uuid).status_code == 204
    since = len(calls)
    engine.run(backend.ctx)
    # One request emptied the lease's consumer and its allocation's.
    assert calls[since:].count(('POST', '/allocations')) == 1
    assert resources(pclient, lease_uuid) == {}
    assert resources(pclient, alloc.uuid) == {}
    assert resources(pclient, foreign) == {offered: {name: 1}}
    wait_for_end(backend, db, lease_uuid)
    converged(db)
    # The class waits for the inventory, which waits for the foreign
    # consumer: its node keeps the unit, reserved; the others lost it.
    engine.run(backend.ctx)
    assert name in classes(pclient)
    assert lease_obj.Lease.get(db, lease_uuid).placement_class
    for node in lease.nodes:
        inventories = pclient.get(
            '/resource_providers/%s/inventories' % node)['inventories']
        if node == offered:
            assert inventories[name]['total'] == 1
            assert inventories[name]['reserved'] == 1
            assert _usages(pclient, node)[name] == 1
        else:
            assert set(inventories) == {RC}
    assert _untouched(pclient, foreign) == before  # never written
    # Placement refuses the other order, as Blazar learnt (1813252).
    with pytest.raises(errors.PlacementConflict):
        pclient.delete('/resource_classes/%s' % name)
    with pytest.raises(errors.PlacementConflict):
        pclient.delete('/resource_providers/%s/inventories/%s'
                       % (offered, name))
    # The foreign consumer lets go: the reconcile removes the inventory,
    # the next engine run the class.
    pclient.delete('/allocations/%s' % foreign)
    worker.Reconcile(backend.placement).reconcile_placement(backend.ctx)
    converged(db)
    assert name not in pclient.get(
        '/resource_providers/%s/inventories' % offered)['inventories']
    engine.run(backend.ctx)
    assert name not in classes(pclient)
    assert not lease_obj.Lease.get(db, lease_uuid).placement_class
    assert audit.drift(auditor(pconf, db, pclient, True), deep=True) == []


def wait_for_end(conductor, db, lease_uuid):
    """Run the engine until the lease ended (its allocation's node goes
    back through a tear-down, done by the fake driver)."""
    def ended():
        engine.run(conductor.ctx)
        return lease_obj.Lease.get(db, lease_uuid).status == 'ended'
    wait_for(ended, timeout=30, interval=0.05, what='the lease to end')


def test_every_busy_node_is_substituted_in_one_round(backend, db, pconf,
                                                     pclient, calls):
    """Placement names only the first node it refuses: the start reads
    every node, so five busy nodes cost one refused round, not five (and
    never fail a lease that has spares)."""
    nodes(db, 16)
    api = make_api(pconf, db, backend.manager)
    lease_uuid, booked = book(api, 6)
    for node in booked[:5]:
        foreign_claim(pclient, node)
    since = len(calls)
    engine.run(backend.ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'active', lease.last_error
    assert not set(booked[:5]) & set(lease.nodes)
    assert claim_posts(calls, since) == 2
