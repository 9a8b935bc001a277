# SPDX-License-Identifier: Apache-2.0
"""A lease's end takes its project's rights first: the node's lessee is
cleared before the end waits on anything, so a lessee that keeps its node
from coming back keeps no rights on it meanwhile; the node still goes back
(``extra`` restored) once it is free, to nobody else before that.
"""

import sqlalchemy as sa

from ferrum.leases import engine
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from tests.functional.leases.conftest import later


def _lease(site, uuid):
    return site.client.get('/v1/leases/%s' % uuid).json


def _book(site, node, project='tenant'):
    resp = site.post(project=project, candidate_nodes=[node.uuid],
                     end=later(3600))
    assert resp.status_code == 201, resp.json
    return resp.json


def _maintenance(site, node, on):
    held = node_obj.Node.get(site.db, node.id)
    held.maintenance = on
    held.save()


def _revoked(site, lease):
    with site.db.reader() as conn:
        return conn.execute(sa.select(lease_obj.NODES.c.revoked).where(
            lease_obj.NODES.c.lease_id == lease_obj.Lease.get(
                site.db, lease['uuid']).id)).scalars().all()


def test_the_end_clears_the_lessee_before_waiting_for_the_node(site):
    (node,) = site.nodes(1, extra={'rack': 'r1'})
    lease = _book(site, node)
    engine.run(site.conductor.ctx)
    assert node_obj.Node.get(site.db, node.id).lessee == 'tenant'
    # The lessee holds the node back, then the lease ends.
    _maintenance(site, node, True)
    used = node_obj.Node.get(site.db, node.id)
    used.extra = dict(used.extra, tenant='was here')
    used.save()
    assert site.client.delete('/v1/leases/%s' % lease['uuid']
                              ).status_code == 204
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'ending', shown
    assert 'in maintenance' in shown['last_error']
    assert node_obj.Node.get(site.db, node.id).lessee is None
    assert _revoked(site, lease) == [True]
    # Free again, but not back yet: a start (run before the ends in the
    # engine's run) of another project's lease may not take it.
    _maintenance(site, node, False)
    other = _book(site, node, project='other')
    engine.run(site.conductor.ctx)
    assert _lease(site, other['uuid'])['status'] == 'error'
    assert _lease(site, lease['uuid'])['status'] == 'ended'
    back = node_obj.Node.get(site.db, node.id)
    assert back.lessee is None
    assert back.extra == {'rack': 'r1'}


def test_the_projects_next_lease_takes_over_a_node_the_end_took_away(site):
    """The end cleared the lessee and waits (maintenance); the project's
    next lease starts before the node is back and takes it as its own, as
    it did when the end left the lessee; the end then hands it over."""
    (node,) = site.nodes(1, extra={'rack': 'r1'})
    first = _book(site, node)
    engine.run(site.conductor.ctx)
    _maintenance(site, node, True)
    assert site.client.delete('/v1/leases/%s' % first['uuid']
                              ).status_code == 204
    engine.run(site.conductor.ctx)
    assert node_obj.Node.get(site.db, node.id).lessee is None
    # Free again, but not back yet; the project's next lease starts
    # (the engine runs starts before ends).
    _maintenance(site, node, False)
    second = _book(site, node)
    engine.run(site.conductor.ctx)
    assert _lease(site, second['uuid'])['status'] == 'active'
    assert _lease(site, first['uuid'])['status'] == 'ended'
    assert node_obj.Node.get(site.db, node.id).lessee == 'tenant'
    assert site.client.delete('/v1/leases/%s' % second['uuid']
                              ).status_code == 204
    engine.run(site.conductor.ctx)
    assert _lease(site, second['uuid'])['status'] == 'ended'
    back = node_obj.Node.get(site.db, node.id)
    assert back.lessee is None and back.extra == {'rack': 'r1'}
