# SPDX-License-Identifier: Apache-2.0
"""A lease in the real Placement (in-process) never goes active short of
the nodes it booked (issue 27): a node deleted behind the deletion's
check, retired or given another resource class before the start is
substituted, and the lease's consumer claims the substitute, or the
start fails and claims nothing, as ``[lease] busy_node_policy`` says."""

import pytest

from ferrum.leases import engine
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from tests.functional.placement.scenario import RC
from tests.functional.placement.scenario import book
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import lessees
from tests.functional.placement.scenario import nodes
from tests.functional.placement.scenario import resources


def _deleted(node):
    node.destroy()


def _retired(node):
    node.retired = True
    node.save()


def _reclassed(node):
    node.resource_class = 'silver'
    node.save()


_CHANGES = {'deleted': _deleted, 'retired': _retired,
            'resource class': _reclassed}


@pytest.mark.parametrize('policy', ['substitute', 'fail'])
@pytest.mark.parametrize('change', sorted(_CHANGES))
def test_a_lost_node_is_substituted_or_fails_the_start(
        backend, api, db, pconf, pclient, policy, change):
    pconf.set_override('busy_node_policy', policy, group='lease')
    nodes(db, 3)
    lease_uuid, booked = book(api, 2)
    _CHANGES[change](node_obj.Node.get(db, booked[0]))
    converged(db)
    engine.run(backend.ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    held = resources(pclient, lease_uuid)
    if policy == 'substitute':
        assert lease.status == 'active', lease.last_error
        assert len(lease.nodes) == 2 and booked[0] not in lease.nodes
        assert held == {node: {RC: 1} for node in lease.nodes}
        assert lessees(db) == set(lease.nodes)
    else:
        assert lease.status == 'error', lease.last_error
        assert 'busy_node_policy is "fail"' in lease.last_error
        assert held == {}
        assert lessees(db) == set()


@pytest.mark.parametrize('change', sorted(_CHANGES))
def test_without_substitute_the_start_fails(backend, api, db, pclient,
                                            change):
    nodes(db, 2)
    lease_uuid, booked = book(api, 2)
    _CHANGES[change](node_obj.Node.get(db, booked[1]))
    converged(db)
    engine.run(backend.ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'error', lease.last_error
    assert 'no free matching node' in lease.last_error
    assert resources(pclient, lease_uuid) == {}
    assert lessees(db) == set()
