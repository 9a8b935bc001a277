# SPDX-License-Identifier: Apache-2.0
"""A lease's end takes its project's rights first: the node's lessee is
cleared when the end is claimed, before the end waits on anything, so a
lessee that keeps its node from coming back keeps no rights on it
meanwhile; the node still goes back (``extra`` restored) once it is free,
to nobody else before that, and a later lease of the project gets it back
only unused.
"""

import uuid

import sqlalchemy as sa

from ferrum.leases import engine
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from tests.functional.leases.sites import run_and_clean


def _lease(site, ident):
    return site.client.get('/v1/leases/%s' % ident).json


def _book(site, nodes, project='tenant', **window):
    resp = site.post(project=project, candidate_nodes=[n.uuid for n in nodes],
                     **dict({'end': site.later(3600)}, **window))
    assert resp.status_code == 201, resp.json
    return resp.json


def _due(site, lease):
    """Time passes: the lease booked ahead is due to start."""
    start = lease_obj.Lease.get(site.db, lease['uuid']).start_at
    site.clock.advance((start - site.clock()).total_seconds())


def _set(site, node, **values):
    held = node_obj.Node.get(site.db, node.id)
    for name, value in values.items():
        setattr(held, name, value)
    held.save()


def _given(site, lease):
    with site.db.reader() as conn:
        return conn.execute(sa.select(lease_obj.NODES.c.given).where(
            lease_obj.NODES.c.lease_id == lease_obj.Lease.get(
                site.db, lease['uuid']).id)).scalars().all()


def _lessee(site, node):
    return node_obj.Node.get(site.db, node.id).lessee


def _end(site, lease):
    assert site.client.delete('/v1/leases/%s' % lease['uuid']
                              ).status_code == 204


def test_the_end_clears_the_lessee_before_waiting_for_the_node(site):
    (node,) = site.nodes(1, extra={'rack': 'r1'})
    lease = _book(site, [node])
    engine.run(site.conductor.ctx)
    assert _lessee(site, node) == 'tenant'
    assert _given(site, lease) == [True]
    # The lessee holds the node back, then the lease ends.
    _set(site, node, maintenance=True,
         extra={'rack': 'r1', 'tenant': 'was here'})
    _end(site, lease)
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'ending', shown
    assert 'in maintenance' in shown['last_error']
    assert _lessee(site, node) is None
    assert _given(site, lease) == [True]
    # Free again, but not back yet: a start (run before the ends in the
    # engine's run) of another project's lease may not take it.
    _set(site, node, maintenance=False)
    other = _book(site, [node], project='other')
    run_and_clean(site, [node])
    assert _lease(site, other['uuid'])['status'] == 'error'
    assert _lease(site, lease['uuid'])['status'] == 'ended'
    back = node_obj.Node.get(site.db, node.id)
    assert back.lessee is None
    assert back.extra == {'rack': 'r1'}


def test_the_projects_next_lease_takes_over_an_unused_node(site):
    """The end cleared the lessee and waits (maintenance); the project's
    next lease starts once the node is unused, before it is back, and
    takes it as its own, as it did when the end left the lessee; the end
    then hands it over."""
    (node,) = site.nodes(1, extra={'rack': 'r1'})
    first = _book(site, [node])
    engine.run(site.conductor.ctx)
    _set(site, node, maintenance=True)
    _end(site, first)
    engine.run(site.conductor.ctx)
    assert _lessee(site, node) is None
    _set(site, node, maintenance=False)
    second = _book(site, [node])
    engine.run(site.conductor.ctx)
    assert _lease(site, second['uuid'])['status'] == 'active'
    assert _lease(site, first['uuid'])['status'] == 'ended'
    assert _lessee(site, node) == 'tenant'
    _end(site, second)
    run_and_clean(site, [node])
    assert _lease(site, second['uuid'])['status'] == 'ended'
    back = node_obj.Node.get(site.db, node.id)
    assert back.lessee is None and back.extra == {'rack': 'r1'}


def test_a_node_held_back_is_not_the_projects_next_leases(site):
    """Deployed and protected by the lessee, the node keeps the end
    waiting; the project's next lease does not get it, nor the rights."""
    (node,) = site.nodes(1)
    first = _book(site, [node])
    second = _book(site, [node], start=site.later(3700), end=site.later(7200))
    engine.run(site.conductor.ctx)
    _set(site, node, provision_state='active', protected=True,
         instance_uuid=str(uuid.uuid4()))
    _end(site, first)
    engine.run(site.conductor.ctx)
    assert _lessee(site, node) is None
    _due(site, second)
    engine.run(site.conductor.ctx)
    shown = _lease(site, second['uuid'])
    assert shown['status'] == 'error', shown
    assert 'is in use by instance' in shown['last_error']
    assert _lessee(site, node) is None
    assert _lease(site, first['uuid'])['status'] == 'ending'


def test_a_failed_start_of_the_next_lease_gives_no_rights_back(site):
    """The project's next lease takes the unused node, then fails on
    another; the end of the first lease takes the lessee away again and
    gives the node back."""
    node, broken = site.nodes(2, extra={'rack': 'r1'})
    first = _book(site, [node])
    engine.run(site.conductor.ctx)
    _set(site, node, extra={'rack': 'r1', 'tenant': 'was here'})
    _end(site, first)
    second = _book(site, [node, broken])
    _set(site, broken, maintenance=True)
    run_and_clean(site, [node])
    assert _lease(site, second['uuid'])['status'] == 'error'
    assert _lease(site, first['uuid'])['status'] == 'ended'
    back = node_obj.Node.get(site.db, node.id)
    assert back.lessee is None
    assert back.extra == {'rack': 'r1'}
