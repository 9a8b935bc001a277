# SPDX-License-Identifier: Apache-2.0
"""Deleting an allocation frees its node, on SQLite and on PostgreSQL.

PostgreSQL takes a one-statement path when nothing stands in the way and
the general path otherwise; both must leave the same rows behind and give
the same refusals.
"""

from collections.abc import Iterator
from typing import Any

import pytest
from oslo_config import cfg

from ferrum.allocation import allocator
from ferrum.allocation import release
from ferrum.common import exception
from ferrum.conductor import service
from ferrum.conductor import task_manager
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj

_AVAILABLE = {'driver': 'fake-hardware', 'provision_state': 'available',
              'power_state': 'power off', 'resource_class': 'gold',
              'instance_info': {'image_source': 'tenant'},
              **{'%s_interface' % kind: 'fake' for kind in (
                  'power', 'management', 'boot', 'deploy', 'inspect',
                  'vendor')}}


@pytest.fixture(params=['sqlite', 'postgresql'])
def started(request: pytest.FixtureRequest, conf: cfg.ConfigOpts,
            tmp_path: Any) -> Iterator[service.ConductorService]:
    if request.param == 'sqlite':
        url = 'sqlite:///%s' % (tmp_path / 'release.sqlite')
    else:
        url = request.getfixturevalue('pg_url')
    conf.set_override('node_locked_retry_attempts', 2, 'conductor')
    conf.set_override('node_locked_retry_interval', 0, 'conductor')
    database = db_api.Database(conf, url=url)
    migration.upgrade(database.engine)
    conductor = service.ConductorService(conf, db=database)
    conductor.start(start_periodics=False)
    try:
        yield conductor
    finally:
        conductor.stop()
        database.dispose()


def _allocate(conductor: service.ConductorService, **node_values: Any
              ) -> tuple[node_obj.Node, allocation_obj.Allocation]:
    node = node_obj.Node.create(conductor.ctx.db,
                                dict(_AVAILABLE, **node_values))
    allocation = allocator.create(conductor.ctx, {
        'resource_class': 'gold', 'name': 'alloc-%d' % node.id}, [])
    assert allocation.state == 'active' and allocation.node_id == node.id
    return node, allocation


def _assert_held(conductor: service.ConductorService, node: node_obj.Node,
                 allocation: allocation_obj.Allocation) -> None:
    held = node_obj.Node.get(conductor.ctx.db, node.id)
    assert held.allocation_id == allocation.id
    assert held.instance_uuid == allocation.uuid
    assert allocation_obj.Allocation.get(conductor.ctx.db, allocation.id)


@pytest.mark.parametrize('by', ['uuid', 'name', 'id'])
def test_delete_frees_the_node(started: service.ConductorService,
                               by: str) -> None:
    node, allocation = _allocate(started)
    assert node_obj.Node.get(started.ctx.db, node.id).instance_info == {
        'image_source': 'tenant', 'traits': []}
    release.destroy(started.ctx, getattr(allocation, by))
    freed = node_obj.Node.get(started.ctx.db, node.id)
    assert freed.allocation_id is None and freed.instance_uuid is None
    # The owner gives the node back: its instance_info goes too.
    assert freed.instance_info == {}
    with pytest.raises(exception.AllocationNotFound):
        allocation_obj.Allocation.get(started.ctx.db, allocation.id)
    with pytest.raises(exception.AllocationNotFound):
        release.destroy(started.ctx, allocation.uuid)


def test_node_in_use_refused_unless_in_maintenance(
        started: service.ConductorService) -> None:
    node, allocation = _allocate(started)
    with started.ctx.db.writer():
        held = node_obj.Node.get(started.ctx.db, node.id)
        held.provision_state = 'active'
        held.save()
    with pytest.raises(exception.InvalidState, match='undeploy the node'):
        release.destroy(started.ctx, allocation.uuid)
    _assert_held(started, node, allocation)
    with started.ctx.db.writer():
        held = node_obj.Node.get(started.ctx.db, node.id)
        held.maintenance = True
        held.save()
    release.destroy(started.ctx, allocation.uuid)
    assert node_obj.Node.get(started.ctx.db, node.id).allocation_id is None


def test_locked_node_refused_and_kept(
        started: service.ConductorService) -> None:
    node, allocation = _allocate(started)
    with task_manager.acquire(started.ctx, node.id, purpose='holding',
                              load_driver=False):
        with pytest.raises(exception.NodeLocked):
            release.destroy(started.ctx, allocation.uuid)
    _assert_held(started, node, allocation)


def test_allocation_without_node_deleted(
        started: service.ConductorService) -> None:
    failed = allocator.create(started.ctx, {'resource_class': 'none'}, [])
    assert failed.state == 'error' and failed.node_id is None
    release.destroy(started.ctx, failed.uuid)
    with pytest.raises(exception.AllocationNotFound):
        allocation_obj.Allocation.get(started.ctx.db, failed.id)
