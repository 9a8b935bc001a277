# SPDX-License-Identifier: Apache-2.0
"""What the Placement tests make and check: ferrum's nodes, another
service's claims (nova's), leases booked through the API, and whether
ferrum and Placement agree (the fixtures are in conftest.py)."""

import datetime
import random
import threading
import uuid

import sqlalchemy as sa

from ferrum.api import app as api_app
from ferrum.api import services
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.placement import audit
from ferrum.placement import claims
from ferrum.placement import client as client_mod
from ferrum.placement import consumer_audit
from ferrum.placement import errors
from ferrum.placement import outbox
from ferrum.placement import sync
from ferrum.placement.resources import providers
from tests.functional.leases.sites import iso
from tests.polling import wait_for

# Without automated cleaning: these tests follow Placement, and a lease's
# end would otherwise clean each free node first (tests/functional/leases
# has those), which takes one more engine run per end.
AVAILABLE = {'driver': 'fake-hardware', 'provision_state': 'available',
             'power_state': 'power off', 'resource_class': 'bm',
             'automated_clean': False,
             **{'%s_interface' % kind: 'fake' for kind in (
                 'power', 'management', 'boot', 'deploy', 'inspect',
                 'vendor')}}
RC = 'CUSTOM_BM'
PROJECT = 'lessee-project'


# ---- what ferrum holds, and whether Placement agrees ----------------------

def converged(db, timeout=10.0):
    """Wait until every queued change was pushed."""
    wait_for(lambda: outbox.backlog(db).size == 0, timeout,
             what='the Placement outbox to drain')


def auditor(conf, db, client, claims=False):
    """What the audits compare and heal with: a pusher, and whether
    allocations are consumers (``claims``)."""
    return sync.Pusher(conf, db, client, claims_allocations=claims)


def assert_no_drift(conf, db, client):
    """The audit finds nothing: ferrum and Placement agree node by node."""
    assert audit.drift(auditor(conf, db, client), deep=True) == []


def no_drift(conf, db, client):
    """Nodes and providers agree, and so do allocations and consumers."""
    assert audit.drift(auditor(conf, db, client, True), deep=True) == []
    assert consumer_audit.drift(auditor(conf, db, client)) == []


def provider(client, uuid):
    """(inventories, traits) of a provider, or None."""
    inventories = client.get('/resource_providers/%s/inventories' % uuid,
                             not_found_ok=True)
    if inventories is None:
        return None
    traits = client.get('/resource_providers/%s/traits' % uuid)
    return inventories['inventories'], set(traits['traits'])


def reserved(client, uuid):
    inventories, _traits = provider(client, uuid)
    (fields,) = inventories.values()
    return fields['reserved']


def holders(client, node_uuid):
    return set(providers.consumers_of(client, node_uuid))


def consumer_body(client, uuid):
    """``GET /allocations/{uuid}`` as Placement answers it."""
    return client.get('/allocations/%s' % uuid)


def resources(client, consumer):
    return {p: v['resources'] for p, v in
            consumer_body(client, consumer)['allocations'].items()}


def classes(client):
    return {rc['name'] for rc in client.get('/resource_classes')[
        'resource_classes']}


def claim_posts(calls, since=0):
    """The ``POST /allocations`` sent since ``since`` (the only request
    that moves claims between consumers)."""
    return calls[since:].count(('POST', '/allocations'))


def writes(consumer, method, url, body):
    """Whether a request (as ``PlacementClient.observers`` see it) writes
    ``consumer``'s allocations: ``PUT`` or ``DELETE /allocations/{it}``,
    or a ``POST /allocations`` naming it."""
    if url.split('?')[0] == '/allocations/%s' % consumer:
        return method in ('PUT', 'DELETE')
    return method == 'POST' and url == '/allocations' and consumer in body


def lessees(db, project=PROJECT):
    return {node.uuid for node in node_obj.Node.list(db)
            if node.lessee == project}


def agrees(db, client, lease_uuid):
    """ferrum's database and Placement tell the same about the lease: an
    active lease's consumer holds exactly its nodes, which are exactly
    the lessee's; a failed one holds nothing, and nothing is lessee's."""
    lease = lease_obj.Lease.get(db, lease_uuid)
    held = resources(client, lease_uuid)
    if lease.status == 'active':
        assert len(lease.nodes) == lease.count
        assert held == {node: {RC: 1} for node in lease.nodes}
        assert lessees(db, lease.project) == set(lease.nodes)
    else:
        assert lease.status == 'error', lease.last_error
        assert held == {}
        assert lessees(db, lease.project) == set()
    return lease


# ---- what ferrum is given --------------------------------------------------

def nodes(db, count, timeout=10.0, **values):
    """``count`` available nodes of class ``bm``, pushed to Placement
    (within ``timeout`` seconds: the gunicorn Placement needs longer)."""
    made = [node_obj.Node.create(db, dict(AVAILABLE, **values))
            for _ in range(count)]
    converged(db, timeout)
    return made


def finished(db, allocation, timeout=60.0):
    """``allocation`` once it is no longer ``allocating``: the create call
    answers after ``[conductor] allocation_wait_timeout`` (1 s) even when
    a loaded machine needs longer for every try, and clients then poll."""
    return wait_for(
        lambda: (lambda row: row if row.state != 'allocating' else None)(
            allocation_obj.Allocation.get(db, allocation.id)),
        timeout, what='allocation %s to finish' % allocation.uuid)


def dead_conductor(db, host):
    """A conductor whose heartbeat stopped long ago."""
    dead = conductor_obj.register(db, host, '', 60)
    with db.writer() as conn:
        conn.execute(sa.update(conductor_obj.TABLE).where(
            conductor_obj.TABLE.c.id == dead.id).values(
                heartbeat_at=datetime.datetime(2020, 1, 1)))
    return dead


def make_api(conf, db, manager):
    """An API client on ``manager``'s conductor and its clock."""
    app = api_app.create_app(conf, db, manager, clock=manager.ctx.clock)
    app.testing = True
    return app.test_client()


def api_now(api):
    """Now by the API's clock (the conductor's, from :func:`make_api`)."""
    with api.application.app_context():
        return services.clock()


def unreachable(method, url, body):
    """A ``PlacementClient`` observer: every request meets a refused
    connection, as the client reports it (nothing is sent)."""
    raise errors.PlacementUnavailable(
        reason='ConnectFailure: %s %s: connection refused' % (method, url))


def book(api, count, project=PROJECT, hours=1):
    """A lease of ``count`` nodes from now; (uuid, its nodes)."""
    end = api_now(api) + datetime.timedelta(hours=hours)
    resp = api.post('/v1/leases', json={
        'project': project, 'resource_class': 'bm', 'count': count,
        'end': iso(end)})
    assert resp.status_code == 201, resp.json
    return resp.json['uuid'], list(resp.json['nodes'])


# ---- another service in Placement ------------------------------------------

def put_consumer(client, consumer, provider, resource_class, project,
                 user):
    """Another service's claim, as nova writes it: ``PUT
    /allocations/{consumer}`` with ``consumer_generation: null`` (only a
    new consumer), past ferrum's writer and its records."""
    client.put('/allocations/%s' % consumer, {
        'allocations': {provider: {'resources': {resource_class: 1}}},
        'consumer_generation': None, 'project_id': project,
        'user_id': user})


def foreign_claim(client, node_uuid, consumer=None):
    """A nova-style claim of one node by another service."""
    consumer = consumer or str(uuid.uuid4())
    put_consumer(client, consumer, node_uuid, RC, 'nova-project',
                 'nova-user')
    return consumer


def stray_claim(conf, db, client, consumer, node_uuid):
    """A consumer of ferrum's (its user) that no allocation made."""
    claims.claim_alone(sync.Pusher(conf, db, client), consumer,
                          node_uuid, 'bm', None)


def change_inventory(client, node_uuid, **fields):
    """Change a provider behind ferrum's back."""
    url = '/resource_providers/%s/inventories' % node_uuid
    inventories = client.get(url)
    inventories['inventories'][RC].update(fields)
    client.put(url, inventories)


class Nova(threading.Thread):
    """A foreign service claiming as nova does: ``GET
    /allocation_candidates?resources=<class>:1``, then ``PUT
    /allocations/{new uuid}`` with ``consumer_generation: null``; a
    refusal (someone was faster) asks again.

    :param prefer: nodes picked first when offered (the race's target).
    :param limit: claims to win, at most.
    """

    def __init__(self, conf, resource_class=RC, prefer=(), limit=None,
                 project='nova-project'):
        super().__init__(daemon=True)
        self.client = client_mod.PlacementClient(conf)
        self.resource_class = resource_class
        self.prefer = set(prefer)
        self.limit = limit
        self.project = project
        self.held = {}  # consumer -> node
        self.refused = 0
        self.errors = []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set() and (
                self.limit is None or len(self.held) < self.limit):
            try:
                offered = providers.allocation_candidates(self.client, 
                    self.resource_class)
            except errors.PlacementRefused as exc:
                self.errors.append(exc)
                return
            if not offered:
                # Everything is taken: ask again a bit later.
                self.stop.wait(0.01)
                continue
            wanted = sorted(self.prefer.intersection(offered)) or offered
            node, consumer = random.choice(wanted), str(uuid.uuid4())
            try:
                put_consumer(self.client, consumer, node,
                             self.resource_class, self.project, 'nova-user')
            except errors.PlacementConflict:
                self.refused += 1
                continue
            self.held[consumer] = node

    def nodes(self):
        return set(self.held.values())

    def finish(self):
        self.stop.set()
        self.join(60)
        assert not self.is_alive()
        assert self.errors == []
