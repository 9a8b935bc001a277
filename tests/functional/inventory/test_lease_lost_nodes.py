# SPDX-License-Identifier: Apache-2.0
"""A lease in the real Placement (in-process) never goes active short of
the nodes it booked (issue 27): a node deleted behind the deletion's
check, retired or given another resource class before the start is
substituted, and the lease's consumer claims the substitute, or the
start fails and claims nothing, as ``[lease] busy_node_policy`` says."""

import datetime

import pytest

from ferrum.api import app as api_app
from ferrum.leases import engine
from ferrum.objects import base
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from tests.functional.inventory import test_allocations as allocations
from tests.functional.inventory.conftest import converged
from tests.functional.inventory.test_allocations import RC
from tests.functional.inventory.test_allocations import nodes
from tests.functional.inventory.test_lease_flow import iso
from tests.functional.inventory.test_lease_flow import resources

backend = allocations.backend
one_call_at_a_time = allocations.one_call_at_a_time
PROJECT = 'lessee-project'


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


def _book(backend, pconf, db, count):
    app = api_app.create_app(pconf, db, backend.manager)
    app.testing = True
    resp = app.test_client().post('/v1/leases', json={
        'project': PROJECT, 'resource_class': 'bm', 'count': count,
        'end': iso(base.utcnow() + datetime.timedelta(hours=1))})
    assert resp.status_code == 201, resp.json
    return resp.json['uuid'], list(resp.json['nodes'])


def _lessees(db):
    return {node.uuid for node in node_obj.Node.list(db)
            if node.lessee == PROJECT}


@pytest.mark.parametrize('policy', ['substitute', 'fail'])
@pytest.mark.parametrize('change', sorted(_CHANGES))
def test_a_lost_node_is_substituted_or_fails_the_start(
        backend, db, pconf, pclient, policy, change):  # noqa: F811
    pconf.set_override('busy_node_policy', policy, group='lease')
    nodes(db, 3)
    lease_uuid, booked = _book(backend, pconf, db, 2)
    _CHANGES[change](node_obj.Node.get(db, booked[0]))
    converged(db)
    engine.run(backend.ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    held = resources(pclient, lease_uuid)
    if policy == 'substitute':
        assert lease.status == 'active', lease.last_error
        assert len(lease.nodes) == 2 and booked[0] not in lease.nodes
        assert held == {node: {RC: 1} for node in lease.nodes}
        assert _lessees(db) == set(lease.nodes)
    else:
        assert lease.status == 'error', lease.last_error
        assert 'busy_node_policy is "fail"' in lease.last_error
        assert held == {}
        assert _lessees(db) == set()


@pytest.mark.parametrize('change', sorted(_CHANGES))
def test_without_substitute_the_start_fails(backend, db, pconf, pclient,
                                            change):  # noqa: F811
    nodes(db, 2)
    lease_uuid, booked = _book(backend, pconf, db, 2)
    _CHANGES[change](node_obj.Node.get(db, booked[1]))
    converged(db)
    engine.run(backend.ctx)
    lease = lease_obj.Lease.get(db, lease_uuid)
    assert lease.status == 'error', lease.last_error
    assert 'no free matching node' in lease.last_error
    assert resources(pclient, lease_uuid) == {}
    assert _lessees(db) == set()
