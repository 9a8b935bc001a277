# SPDX-License-Identifier: Apache-2.0
"""The lease engine on fake hardware, SQLite and PostgreSQL: start, use,
end (nodes really undeployed and cleaned), guard time, busy-node policies.
"""

import pytest

from ferrum.allocation import allocator
from ferrum.common import states
from ferrum.leases import engine
from ferrum.objects import node as node_obj
from tests.functional.conductor.flows import resume
from tests.functional.conductor.flows import settled
from tests.functional.leases.sites import fault


def _lease(site, uuid):
    return site.client.get('/v1/leases/%s' % uuid).json


def _allocate(site, **values):
    return allocator.create(site.conductor.ctx,
                            dict({'resource_class': 'gold'}, **values), [])


def test_start_use_and_end(site):
    ctx, manager = site.conductor.ctx, site.conductor.manager
    leased = site.nodes(2, driver_info={'fake_async': ['erase_devices']},
                        extra={'rack': 'r1'})
    spare = site.nodes(1)[0]
    lease = site.post(project='tenant', resource_class='gold', count=2,
                      candidate_nodes=[n.uuid for n in leased],
                      end=site.later(3600)).json
    engine.run(ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'active', shown
    assert shown['before_end_fired_at'] is not None  # 1 h lease, 1 h before
    for node in leased:
        assert node_obj.Node.get(site.db, node.id).lessee == 'tenant'

    # Only the lessee's allocations reach the leased nodes.
    assert _allocate(site, owner='someone-else').state == 'error'
    anyone = _allocate(site)
    assert anyone.state == 'active' and anyone.node_id == spare.id
    refused = _allocate(site)
    assert refused.state == 'error'
    assert '2 leased, or about to be, to another project' in (
        refused.last_error)
    mine = _allocate(site, owner='tenant')
    assert mine.state == 'active' and mine.node_id in {n.id for n in leased}
    used = node_obj.Node.get(site.db, mine.node_id)
    used.extra['tenant'] = 'was here'
    used.save()
    manager.do_provisioning_action(used.id, 'deploy')
    settled(site.db, used.id, states.ACTIVE)

    assert site.client.delete('/v1/leases/%s' % lease['uuid']
                              ).status_code == 204
    engine.run(ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'ending', shown
    assert 'being undeployed and cleaned' in shown['last_error'] or (
        'clean' in shown['last_error'])
    # The deployed node went through tear-down into (async) cleaning.
    node = settled(site.db, used.id, states.CLEANWAIT)
    assert node.allocation_id is None and node.instance_uuid is None
    resume(manager, node)
    settled(site.db, used.id, states.AVAILABLE)
    # The unused one is cleaned too (async as well).
    (unused,) = [n for n in leased if n.id != used.id]
    resume(manager, settled(site.db, unused.id, states.CLEANWAIT))
    settled(site.db, unused.id, states.AVAILABLE)
    engine.run(ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'ended', shown
    assert shown['last_error'] is None
    for node in leased:
        node = node_obj.Node.get(site.db, node.id)
        assert node.lessee is None
        assert node.extra == {'rack': 'r1'}
        assert node.instance_info == {}
        assert node.provision_state == states.AVAILABLE
    assert site.client.get('/v1/allocations/%s' % mine.uuid, headers={
        'X-OpenStack-Ironic-API-Version': '1.60'}).status_code == 404


def test_guard_time_hides_nodes_from_other_allocations(site, conf):
    conf.set_override('guard_time', 600, 'lease')
    soon, later_node = site.nodes(2)
    assert site.post(project='p', candidate_nodes=[soon.uuid],
                     start=site.later(300),
                     end=site.later(3600)).status_code == 201
    assert site.post(project='p', candidate_nodes=[later_node.uuid],
                     start=site.later(1800),
                     end=site.later(3600)).status_code == 201
    first = _allocate(site)
    assert first.state == 'active' and first.node_id == later_node.id
    second = _allocate(site)
    assert second.state == 'error'
    assert '1 leased, or about to be, to another project' in (
        second.last_error)


def test_the_guard_is_measured_by_the_conductors_clock(site, conf):
    """A lease a day ahead of the wall clock but minutes ahead of the
    conductor's clock hides its node: the allocation reads the same now
    as the lease engine."""
    conf.set_override('guard_time', 600, 'lease')
    (node,) = site.nodes(1)
    assert site.post(project='p', candidate_nodes=[node.uuid],
                     start=site.later(86400),
                     end=site.later(90000)).status_code == 201
    site.clock.advance(86400 - 300)
    refused = _allocate(site)
    assert refused.state == 'error'
    assert '1 leased, or about to be, to another project' in (
        refused.last_error)


@pytest.mark.parametrize('policy', ['substitute', 'fail'])
def test_busy_node_policy(site, conf, policy):
    conf.set_override('busy_node_policy', policy, 'lease')
    nodes = site.nodes(2)
    lease = site.post(project='p', resource_class='gold', count=1,
                      end=site.later(3600)).json
    busy = node_obj.Node.get(site.db, lease['nodes'][0])
    busy.maintenance = True
    busy.save()
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    (spare,) = [n for n in nodes if n.id != busy.id]
    spare = node_obj.Node.get(site.db, spare.id)
    if policy == 'substitute':
        assert shown['status'] == 'active', shown
        assert shown['nodes'] == [spare.uuid]
        assert spare.lessee == 'p'
    else:
        assert shown['status'] == 'error', shown
        assert 'node %s is in maintenance' % busy.uuid in shown['last_error']
        assert 'busy_node_policy is "fail"' in shown['last_error']
        assert spare.lessee is None
        # An error lease keeps its window until it is deleted.
        again = site.post(project='q', candidate_nodes=[busy.uuid],
                          end=site.later(600))
        assert again.status_code == 409, fault(again)
        assert site.client.delete('/v1/leases/%s' % lease['uuid']
                                  ).status_code == 204
        engine.run(site.conductor.ctx)
        assert _lease(site, lease['uuid'])['status'] == 'ended'
    assert node_obj.Node.get(site.db, busy.id).lessee is None


def test_substitute_without_spare_fails(site, conf):
    (node,) = site.nodes(1)
    lease = site.post(project='p', resource_class='gold',
                      end=site.later(3600)).json
    busy = node_obj.Node.get(site.db, node.id)
    busy.maintenance = True
    busy.save()
    engine.run(site.conductor.ctx)
    shown = _lease(site, lease['uuid'])
    assert shown['status'] == 'error'
    assert '"substitute"' in shown['last_error']
