# SPDX-License-Identifier: Apache-2.0
"""A lease's end wipes what the lessee used (issue 40): every node of the
lease goes through automated cleaning, erase steps and all, before it is
``available`` to anyone else, even one that looks unused; the event feed
says which erase steps ran for which lease. Not when automated cleaning
is off for the node, nor between two leases of one project."""

import pytest
import sqlalchemy as sa

from ferrum.common import states
from ferrum.leases import engine
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects.lease import ends as lease_ends
from tests.functional.conductor.flows import resume
from tests.functional.conductor.flows import settled

_ERASE = 'Clean step deploy.erase_devices started'


class _Killed(BaseException):
    """The conductor dies here (nothing catches it)."""


def _lease(site, uuid):
    return site.client.get('/v1/leases/%s' % uuid).json


def _book(site, nodes, project='tenant', **window):
    resp = site.post(project=project, candidate_nodes=[n.uuid for n in nodes],
                     **dict({'end': site.later(3600)}, **window))
    assert resp.status_code == 201, resp.json
    return resp.json


def _end(site, lease):
    assert site.client.delete('/v1/leases/%s' % lease['uuid']
                              ).status_code == 204


def _feed(site):
    """Every event of ``GET /v1/events``, page by page."""
    events, url = [], '/v1/events?since=0&limit=100'
    while True:
        body = site.client.get(url).json
        if not body['events']:
            return events
        events += body['events']
        url = body['next']


def _erased(site, node):
    """The node's erase steps in the feed."""
    return [e for e in _feed(site)
            if e['node_uuid'] == node.uuid and e['event'] == _ERASE]


def _node(site, node):
    return node_obj.Node.get(site.db, node.id)


def test_an_unused_node_is_cleaned_before_it_goes_back(site):
    (node,) = site.nodes(1, extra={'rack': 'r1'})
    lease = _book(site, [node])
    engine.run(site.conductor.ctx)
    assert _lease(site, lease['uuid'])['status'] == 'active'
    assert _erased(site, node) == []
    _end(site, lease)
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'ending', shown
    assert 'node %s, being cleaned' % node.uuid in shown['last_error']
    # Nobody's while it is cleaned, and not back before it is done.
    assert _node(site, node).lessee is None
    settled(site.db, node.id, states.AVAILABLE)
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'ended', shown
    assert shown['last_error'] is None
    back = _node(site, node)
    assert (back.lessee, back.extra, back.provision_state) == (
        None, {'rack': 'r1'}, states.AVAILABLE)

    # The feed: the erase step ran for that lease, which its project may
    # read, between the end taking the node away and giving it back.
    events = _feed(site)
    (erased,) = [e for e in events if e['event'] == _ERASE]
    assert erased['node_uuid'] == node.uuid
    assert erased['lease_uuid'] == lease['uuid']
    assert erased['lessee'] == 'tenant'
    texts = [e['event'] for e in events if e['node_uuid'] == node.uuid]
    prefix = 'Lease %s ' % lease['uuid']
    order = [prefix + 'ended: project tenant is no longer the lessee',
             'Cleaning for the end of lease %s of project tenant'
             % lease['uuid'], _ERASE,
             'Given back by lease %s of project tenant' % lease['uuid']]
    assert [t for t in texts if t in order] == order
    (cleaning,) = [e for e in events if e['event'] == order[1]]
    assert cleaning['lease_uuid'] == lease['uuid']

    # Once: an ended lease cleans nothing more, and a later cleaning of
    # the node is nobody's lease's.
    engine.run(site.conductor.ctx)
    assert len(_erased(site, node)) == 1
    site.conductor.manager.do_provisioning_action(node.id, 'manage')
    site.conductor.manager.do_provisioning_action(node.id, 'provide')
    settled(site.db, node.id, states.AVAILABLE)
    assert [e['lease_uuid'] for e in _erased(site, node)] == [
        lease['uuid'], None]


def test_a_deployed_node_is_cleaned_once_by_its_tear_down(site):
    ctx, manager = site.conductor.ctx, site.conductor.manager
    (node,) = site.nodes(1)
    lease = _book(site, [node])
    engine.run(ctx)
    manager.do_provisioning_action(node.id, 'deploy')
    settled(site.db, node.id, states.ACTIVE)
    _end(site, lease)
    engine.run(ctx)
    assert 'being undeployed and cleaned' in _lease(
        site, lease['uuid'])['last_error']
    settled(site.db, node.id, states.AVAILABLE)
    engine.run(ctx)
    assert _lease(site, lease['uuid'])['status'] == 'ended'
    # The tear-down's cleaning was the lease's; no second one.
    assert [e['lease_uuid'] for e in _erased(site, node)] == [lease['uuid']]


@pytest.mark.parametrize('where', ['node', 'conductor'])
def test_without_automated_cleaning_the_node_goes_back_at_once(site, conf,
                                                               where):
    if where == 'node':
        (node,) = site.nodes(1, automated_clean=False)
    else:
        conf.set_override('automated_clean', False, 'conductor')
        (node,) = site.nodes(1)
    lease = _book(site, [node])
    engine.run(site.conductor.ctx)
    _end(site, lease)
    engine.run(site.conductor.ctx)
    assert _lease(site, lease['uuid'])['status'] == 'ended'
    back = _node(site, node)
    assert (back.lessee, back.provision_state) == (None, states.AVAILABLE)
    assert _erased(site, node) == []


def test_the_nodes_own_choice_comes_first(site, conf):
    conf.set_override('automated_clean', False, 'conductor')
    (node,) = site.nodes(1, automated_clean=True)
    lease = _book(site, [node])
    engine.run(site.conductor.ctx)
    _end(site, lease)
    engine.run(site.conductor.ctx)
    assert _lease(site, lease['uuid'])['status'] == 'ending'
    settled(site.db, node.id, states.AVAILABLE)
    engine.run(site.conductor.ctx)
    assert _lease(site, lease['uuid'])['status'] == 'ended'
    assert len(_erased(site, node)) == 1


def test_the_projects_next_lease_keeps_the_node_uncleaned(site):
    """Back to back, one project: no cleaning in between (nothing to
    erase from a tenant for itself); the last end cleans."""
    (node,) = site.nodes(1)
    first = _book(site, [node])
    second = _book(site, [node], start=site.later(3600),
                   end=site.later(7200))
    engine.run(site.conductor.ctx)
    site.clock.advance(3600)
    engine.run(site.conductor.ctx)
    assert _lease(site, first['uuid'])['status'] == 'ended'
    assert _lease(site, second['uuid'])['status'] == 'active'
    assert _node(site, node).lessee == 'tenant'
    assert _erased(site, node) == []
    site.clock.advance(3600)
    engine.run(site.conductor.ctx)
    assert _lease(site, second['uuid'])['status'] == 'ending'
    settled(site.db, node.id, states.AVAILABLE)
    engine.run(site.conductor.ctx)
    assert _lease(site, second['uuid'])['status'] == 'ended'
    assert [e['lease_uuid'] for e in _erased(site, node)] == [
        second['uuid']]


def test_another_projects_lease_gets_the_node_only_cleaned(site):
    (node,) = site.nodes(1, driver_info={'fake_async': ['erase_devices']})
    first = _book(site, [node])
    other = _book(site, [node], project='other', start=site.later(3600),
                  end=site.later(7200))
    engine.run(site.conductor.ctx)
    site.clock.advance(3600)
    engine.run(site.conductor.ctx)
    # The other project's start runs before the end is done: the node is
    # still cleaning, and that start fails rather than take it.
    assert _lease(site, first['uuid'])['status'] == 'ending'
    assert _lease(site, other['uuid'])['status'] == 'error'
    assert _node(site, node).lessee is None
    resume(site.conductor.manager,
           settled(site.db, node.id, states.CLEANWAIT))
    settled(site.db, node.id, states.AVAILABLE)
    engine.run(site.conductor.ctx)
    assert _lease(site, first['uuid'])['status'] == 'ended'
    assert [e['lease_uuid'] for e in _erased(site, node)] == [first['uuid']]


def test_each_pass_of_the_end_starts_no_second_cleaning(site):
    """The end runs every pass again: while the node cleans (waiting on
    an asynchronous step) it only waits, and the row stays wiped."""
    (node,) = site.nodes(1, driver_info={'fake_async': ['erase_devices']})
    lease = _book(site, [node])
    engine.run(site.conductor.ctx)
    _end(site, lease)
    engine.run(site.conductor.ctx)
    waiting = settled(site.db, node.id, states.CLEANWAIT)
    for _ in range(3):
        engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'ending'
    assert 'in provision state "clean wait"' in shown['last_error']
    assert len(_erased(site, node)) == 1
    with site.db.reader() as conn:
        assert conn.execute(sa.select(lease_obj.NODES.c.wiped).where(
            lease_obj.NODES.c.node_id == node.id)).scalars().all() == [True]
    resume(site.conductor.manager, waiting)
    settled(site.db, node.id, states.AVAILABLE)
    engine.run(site.conductor.ctx)
    assert _lease(site, lease['uuid'])['status'] == 'ended'
    assert len(_erased(site, node)) == 1


def test_a_conductor_killed_before_marking_the_row_cleans_again(
        site, monkeypatch):
    """Killed between starting the cleaning and marking the row (here:
    the mark fails): the next pass waits for the node, then cleans it
    once more rather than give it back unmarked."""
    (node,) = site.nodes(1)
    lease = _book(site, [node])
    engine.run(site.conductor.ctx)
    _end(site, lease)

    def killed(db, row_ids):
        raise _Killed()
    with monkeypatch.context() as patched:
        patched.setattr(lease_ends, 'mark_wiped', killed)
        with pytest.raises(_Killed):
            engine.run(site.conductor.ctx)
    settled(site.db, node.id, states.AVAILABLE)
    engine.run(site.conductor.ctx)
    assert _lease(site, lease['uuid'])['status'] == 'ending'
    settled(site.db, node.id, states.AVAILABLE)
    engine.run(site.conductor.ctx)
    assert _lease(site, lease['uuid'])['status'] == 'ended'
    assert [e['lease_uuid'] for e in _erased(site, node)] == [
        lease['uuid']] * 2


def test_a_failed_cleaning_keeps_the_lease_waiting(site):
    ctx, manager = site.conductor.ctx, site.conductor.manager
    (node,) = site.nodes(1, driver_info={'fake_fail': ['erase_devices']})
    lease = _book(site, [node])
    engine.run(ctx)
    _end(site, lease)
    engine.run(ctx)
    failed = settled(site.db, node.id, states.CLEANFAIL)
    assert failed.maintenance
    engine.run(ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'ending', shown
    assert 'node %s, in maintenance' % node.uuid in shown['last_error']
    assert _node(site, node).lessee is None
    for _ in range(2):
        engine.run(ctx)  # nothing loops: one failed attempt
    assert len(_erased(site, node)) == 1

    # The operator repairs it; the end has it cleaned again, then back.
    manager.update_node(node.id, {'driver_info': {}})
    manager.set_maintenance(node.id, False)
    manager.do_provisioning_action(node.id, 'manage')
    engine.run(ctx)
    assert 'being cleaned' in _lease(site, lease['uuid'])['last_error']
    settled(site.db, node.id, states.AVAILABLE)
    engine.run(ctx)
    assert _lease(site, lease['uuid'])['status'] == 'ended'
    assert [e['lease_uuid'] for e in _erased(site, node)] == [
        lease['uuid']] * 2
