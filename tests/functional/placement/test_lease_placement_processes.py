# SPDX-License-Identifier: Apache-2.0
"""Leases in the real Placement under gunicorn, raced by foreign consumers
claiming as nova does: the start is all or nothing from both sides, the
lease's class and ferrum's allocations never share a node, no claim move
opens a gap, and a Placement outage holds the start back."""

import datetime
import threading

import pytest

from ferrum.leases import engine
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import base
from ferrum.objects import lease as lease_obj
from ferrum.objects.lease import holds as lease_holds
from ferrum.objects.lease import nodes as lease_nodes
from ferrum.placement import audit
from ferrum.placement import client as client_mod
from ferrum.placement import reservations
from ferrum.placement.resources import providers
from tests.functional.leases.sites import iso
from tests.functional.placement.scenario import PROJECT
from tests.functional.placement.scenario import RC
from tests.functional.placement.scenario import Nova
from tests.functional.placement.scenario import agrees
from tests.functional.placement.scenario import auditor
from tests.functional.placement.scenario import book
from tests.functional.placement.scenario import claim_posts
from tests.functional.placement.scenario import consumer_body
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import foreign_claim
from tests.functional.placement.scenario import holders
from tests.functional.placement.scenario import lessees
from tests.functional.placement.scenario import make_api
from tests.functional.placement.scenario import nodes
from tests.functional.placement.scenario import resources
from tests.polling import wait_for


class Observer(threading.Thread):
    """Reads the lease's consumer over and over: what it held each time."""

    def __init__(self, conf, lease_uuid):
        super().__init__(daemon=True)
        self.client = client_mod.PlacementClient(conf)
        self.lease_uuid = lease_uuid
        self.seen = []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.seen.append(frozenset(
                consumer_body(self.client, self.lease_uuid)['allocations']))

    def finish(self):
        self.stop.set()
        self.join(60)
        assert not self.is_alive()
        return self.seen


@pytest.fixture
def api(gbackend, gconf, db):
    return make_api(gconf, db, gbackend.manager)


@pytest.mark.parametrize('policy', ['substitute', 'fail'])
def test_a_start_racing_nova_is_all_or_nothing(
        policy, gbackend, api, db, gconf, calls):
    gconf.set_override('busy_node_policy', policy, group='lease')
    made = nodes(db, 30, timeout=60)
    client = client_mod.PlacementClient(gconf)
    lease_uuid, booked = book(api, 10)
    # Held by nova before the start: the first claim round is refused.
    early = foreign_claim(client, booked[0])
    # nova goes on claiming, the lease's nodes first while it is offered
    # them; at most 2 more, so that a substitute start needs at most 3
    # rounds more of its 4 (nova's picks fall on the booked nodes only).
    nova = Nova(gconf, prefer=booked[1:], limit=2)
    observer = Observer(gconf, lease_uuid)
    observer.start()
    nova.start()
    since = len(calls)
    engine.run(gbackend.ctx)
    nova.finish()
    seen = observer.finish()
    lease = agrees(db, client, lease_uuid)
    theirs = nova.nodes() | {booked[0]}
    # Placement's side, node by node: one consumer at most, never the
    # lease's and a foreign one.
    for node in made:
        held = holders(client, node.uuid)
        assert len(held) <= 1, (node.uuid, held)
    # The lease's consumer, at every observation: nothing or everything.
    assert seen, 'the observer never read the lease\'s consumer'
    assert {len(nodes) for nodes in seen} <= {0, lease.count}, seen
    if policy == 'fail':
        assert lease.status == 'error'
        assert 'busy_node_policy is "fail"' in lease.last_error
        assert claim_posts(calls, since) == 1
        assert seen == [frozenset()] * len(seen)
        # The failed lease's nodes are free for anyone: nova may take
        # them now.
    else:
        assert lease.status == 'active', lease.last_error
        assert booked[0] not in lease.nodes
        assert not set(lease.nodes) & theirs
        assert all(not nodes & theirs for nodes in seen)
        # One request per claim round: after a refused round every node
        # is read and all the busy ones are replaced before the next (a
        # node nova takes meanwhile costs one more round).
        replaced = set(booked) - set(lease.nodes)
        assert replaced
        assert 2 <= claim_posts(calls, since) <= 1 + len(replaced)
    for consumer in [early, *nova.held]:
        assert consumer_body(client, consumer)['user_id'] == 'nova-user'
    converged(db, timeout=60)
    assert audit.drift(auditor(gconf, db, client, True), deep=True) == []


def _ferrum(manager, made, stop):
    while not stop.is_set():
        allocation = manager.create_allocation(
            {'resource_class': 'bm', 'owner': PROJECT}, [])
        if allocation.state != 'active':
            return
        made.append(allocation)


def test_the_class_and_ferrum_allocations_never_share_a_node(
        gbackend, api, db, gconf):
    nodes(db, 12, timeout=60)
    client = client_mod.PlacementClient(gconf)
    lease_uuid, _booked = book(api, 10)
    engine.run(gbackend.ctx)
    lease = agrees(db, client, lease_uuid)
    assert lease.status == 'active', lease.last_error
    converged(db, timeout=60)
    name = reservations.class_name(lease_uuid)
    # A nova flavor with resources:CUSTOM_RESERVATION_<X>=1 (the lease's
    # consumer holds each node's CUSTOM_BM unit: it asks only for this).
    flavors = [Nova(gconf, name, project=PROJECT) for _ in range(2)]
    stop = threading.Event()
    made = []
    ferrum = [threading.Thread(target=_ferrum, args=(
        gbackend.manager, made, stop)) for _ in range(2)]
    for thread in [*flavors, *ferrum]:
        thread.start()
    for thread in ferrum:
        thread.join(60)
        assert not thread.is_alive()
    wait_for(lambda: not providers.allocation_candidates(client, name),
             timeout=30,
             what='every node of the lease to be taken')
    for flavor in flavors:
        flavor.finish()
    foreign = set().union(*(flavor.nodes() for flavor in flavors))
    mine = {a.node_uuid: a.uuid for a in allocation_obj.Allocation.list(db)
            if a.state == 'active'}
    assert foreign and mine, 'both sides should have won some nodes'
    assert not foreign & set(mine)
    assert foreign | set(mine) == set(lease.nodes)
    # Placement's side: the reservation unit has one holder per node,
    # either ferrum's allocation or the foreign consumer.
    ours = set(mine.values())
    for node in lease.nodes:
        held = {consumer for consumer, found
                in providers.consumers_of(client, node).items()
                if name in found['resources']}
        assert len(held) == 1, (node, held)
        assert (held <= ours) == (node in mine)
        if node in mine:
            assert held == {mine[node]}
    # The lease's consumer holds exactly the nodes ferrum did not take.
    assert set(resources(client, lease_uuid)) == set(lease.nodes) - set(mine)
    converged(db, timeout=60)
    assert audit.drift(auditor(gconf, db, client, True), deep=True) == []


def test_no_move_opens_a_gap_to_a_nova_claimer(
        gbackend, api, db, gconf, calls):
    made = nodes(db, 14, timeout=60)
    client = client_mod.PlacementClient(gconf)
    lease_uuid, booked = book(api, 4)
    early = foreign_claim(client, booked[0])
    # Until the start, nothing in Placement keeps a booked node: the
    # claimer racing the start takes one more at most (as in the start
    # test above), the next one then claims on and on.
    starting = Nova(gconf, limit=1, prefer=booked[1:])
    nova = Nova(gconf)  # asks CUSTOM_BM:1, knows nothing of the lease
    starting.start()
    try:
        # A node substituted at the start.
        since = len(calls)
        engine.run(gbackend.ctx)
        starting.finish()
        nova.start()
        lease = agrees(db, client, lease_uuid)
        assert lease.status == 'active', lease.last_error
        assert booked[0] not in lease.nodes
        replaced = set(booked) - set(lease.nodes)
        # One request per round: the refused ones (each replaces every
        # node then busy), then the good one.
        assert replaced
        assert 2 <= claim_posts(calls, since) <= 1 + len(replaced)
        wait_for(lambda: not providers.allocation_candidates(client, RC),
                 timeout=30,
                 what='nova to take every free node')
        converged(db, timeout=60)
        for _round in range(3):
            # An allocation taken under the lease: one POST.
            since = len(calls)
            alloc = gbackend.manager.create_allocation(
                {'resource_class': 'bm', 'owner': PROJECT}, [])
            assert alloc.state == 'active', alloc.last_error
            assert claim_posts(calls, since) == 1
            assert alloc.node_uuid in lease.nodes
            # Deleted before the end: back to the lease's consumer, one
            # POST.
            since = len(calls)
            gbackend.manager.destroy_allocation(alloc.uuid)
            assert claim_posts(calls, since) == 1
            assert resources(client, lease_uuid) == {
                node: {RC: 1} for node in lease.nodes}
        # Extended, then shortened: nothing moves in Placement.
        held = consumer_body(client, lease_uuid)
        since = len(calls)
        for hours in (3, 2):
            end = base.utcnow() + datetime.timedelta(hours=hours)
            resp = api.patch('/v1/leases/%s' % lease_uuid, json=[
                {'op': 'replace', 'path': '/end', 'value': iso(end)}])
            assert resp.status_code == 200, resp.json
            engine.run(gbackend.ctx)
        assert claim_posts(calls, since) == 0
        assert consumer_body(client, lease_uuid) == held
    finally:
        nova.finish()
    # nova won every other node and none of the lease's, ever: its
    # consumers never release, so a node won in a gap would still be
    # its.
    assert nova.held, 'nova should have claimed the free nodes'
    theirs = nova.nodes() | starting.nodes() | {booked[0]}
    assert not theirs & set(lease.nodes)
    assert {node.uuid for node in made} == theirs | set(lease.nodes)
    assert resources(client, early) == {booked[0]: {RC: 1}}
    assert lease_obj.Lease.get(db, lease_uuid).status == 'active'
    assert audit.drift(auditor(gconf, db, client, True), deep=True) == []


def test_placement_killed_during_a_start_and_an_end(
        gbackend, api, db, gconf, placement_process):
    nodes(db, 3, timeout=60)
    lease_uuid, _booked = book(api, 2)
    placement_process.kill()
    engine.run(gbackend.ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'starting'
    assert 'waiting for Placement' in lease.last_error
    engine.run(gbackend.ctx)  # still away: still waiting, nothing undone
    assert lease_obj.Lease.get(db, lease_uuid).status == 'starting'
    placement_process.start()
    client = client_mod.PlacementClient(gconf)

    def started():
        engine.run(gbackend.ctx)
        return lease_obj.Lease.get(db, lease_uuid).status == 'active'
    wait_for(started, timeout=60, interval=0.2,
             what='the lease to start once Placement is back')
    lease = agrees(db, client, lease_uuid)
    assert lease.last_error is None
    converged(db, timeout=60)
    # Killed again, during the end: no node goes back before Placement
    # let go of the lease's claims.
    placement_process.kill()
    assert api.delete('/v1/leases/%s' % lease_uuid).status_code == 204
    engine.run(gbackend.ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'ending'
    assert 'Placement, to release the lease\'s claims' in lease.last_error
    # The project's rights went first; the lease still holds the nodes,
    # in Placement too.
    assert lessees(db) == set()
    rows = lease_nodes.node_rows_of(db, [lease.id])[lease.id]
    assert {row.node_uuid for row in rows} == set(lease.nodes)
    with db.reader() as conn:
        assert lease_holds.placement_holders(
            conn, [row.node_id for row in rows]) == {
                row.node_id: (lease_uuid, 'ending', PROJECT) for row in rows}
    placement_process.start()

    def ended():
        engine.run(gbackend.ctx)
        return lease_obj.Lease.get(db, lease_uuid).status == 'ended'
    wait_for(ended, timeout=60, interval=0.2,
             what='the lease to end once Placement is back')
    assert resources(client, lease_uuid) == {}
    assert lessees(db) == set()
    converged(db, timeout=60)
    engine.run(gbackend.ctx)
    assert reservations.class_name(lease_uuid) not in {
        rc['name'] for rc in client.get('/resource_classes')[
            'resource_classes']}
    assert audit.drift(auditor(gconf, db, client, True), deep=True) == []
