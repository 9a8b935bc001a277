# SPDX-License-Identifier: Apache-2.0
"""Leases on a conductor without ``[placement]``: ``ctx.placement`` is the
null handle, whose steps do nothing for a lease without a class and wait,
saying why, for a lease another conductor booked with one."""

import sqlalchemy as sa

from ferrum.db import models
from ferrum.leases import engine
from ferrum.objects import node as node_obj
from ferrum.placement import service
from tests.functional.leases.sites import run_and_clean

_LEASES = models.table(models.Lease)
_OUTBOX = models.table(models.PlacementOutbox)
_UNCONFIGURED = ('was created with [placement] configured, but this '
                 'conductor has no [placement] section')


def _lease(site, uuid):
    return site.client.get('/v1/leases/%s' % uuid).json


def _with_class(site, uuid):
    """As if a conductor with ``[placement]`` had booked the lease."""
    with site.db.writer() as conn:
        conn.execute(sa.update(_LEASES).where(_LEASES.c.uuid == uuid)
                     .values(placement_class=True))


def _queued(site):
    with site.db.reader() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(
            _OUTBOX)).scalar_one()


def test_a_lease_without_a_class_starts_and_ends_with_nothing_queued(site):
    ctx = site.conductor.ctx
    assert isinstance(ctx.placement, service.Off)
    nodes = site.nodes(2)
    lease = site.post(project='tenant', resource_class='gold', count=2,
                      end=site.later(3600)).json
    engine.run(ctx)
    assert _lease(site, lease['uuid'])['status'] == 'active'
    assert site.client.delete('/v1/leases/%s' % lease['uuid']
                              ).status_code == 204
    run_and_clean(site, nodes)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'ended', shown
    assert shown['reservation_class'] is None
    assert _queued(site) == 0
    assert all(node_obj.Node.get(site.db, n.id).lessee is None
               for n in nodes)


def test_a_lease_with_a_class_waits_here_at_its_start_and_its_end(site):
    ctx = site.conductor.ctx
    nodes = site.nodes(1)
    waiting = site.post(project='tenant', resource_class='gold', count=1,
                        end=site.later(3600)).json
    _with_class(site, waiting['uuid'])
    engine.run(ctx)
    shown = _lease(site, waiting['uuid'])
    assert shown['status'] == 'starting', shown
    assert shown['last_error'].startswith(
        'Starting: waiting for Placement, which holds the nodes for the '
        'lease:'), shown
    assert _UNCONFIGURED in shown['last_error']
    engine.run(ctx)  # still waiting, nothing else happens
    assert _lease(site, waiting['uuid'])['status'] == 'starting'

    other = site.nodes(1)
    active = site.post(project='other', resource_class='gold', count=1,
                       candidate_nodes=[other[0].uuid],
                       end=site.later(3600)).json
    engine.run(ctx)
    assert _lease(site, active['uuid'])['status'] == 'active'
    _with_class(site, active['uuid'])
    assert site.client.delete('/v1/leases/%s' % active['uuid']
                              ).status_code == 204
    engine.run(ctx)
    shown = _lease(site, active['uuid'])
    assert shown['status'] == 'ending', shown
    assert shown['last_error'].startswith(
        'Ending: waiting for Placement, to release the lease\'s claims'), (
        shown)
    assert _UNCONFIGURED in shown['last_error']
    engine.run(ctx)  # still waiting: nothing goes back meanwhile
    assert _lease(site, active['uuid'])['status'] == 'ending'
    assert _queued(site) == 0
    assert node_obj.Node.get(site.db, nodes[0].id).lessee == 'tenant'
