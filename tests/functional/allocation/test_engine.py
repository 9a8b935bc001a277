# SPDX-License-Identifier: Apache-2.0
"""The allocation engine on a real database: filters, locks, fencing,
take-over."""

import datetime
import random
import threading

import pytest
import sqlalchemy as sa

from ferrum import conf as ferrum_conf
from ferrum.allocation import allocator
from ferrum.allocation import candidates
from ferrum.allocation import takeover
from ferrum.common import exception
from ferrum.conductor import service
from ferrum.conductor import task_manager
from ferrum.db import api as db_api
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj

_AVAILABLE = {'driver': 'fake-hardware', 'provision_state': 'available',
              'power_state': 'power off', 'resource_class': 'gold',
              **{'%s_interface' % kind: 'fake' for kind in (
                  'power', 'management', 'boot', 'deploy', 'inspect',
                  'vendor')}}


def _node(db, traits=(), **values):
    node = node_obj.Node.create(db, dict(_AVAILABLE, **values))
    if traits:
        trait_obj.set_for_node(db, node.id, traits)
    return node


def _row(db, conductor_id, **values):
    """An allocating row as a conductor leaves it when it dies mid-way."""
    return allocation_obj.Allocation.create(db, dict(
        {'resource_class': 'gold', 'conductor_affinity': conductor_id},
        **values))


def test_trait_superset_is_tested_in_sql(db):
    wide = _node(db, traits=['CUSTOM_A', 'CUSTOM_B', 'CUSTOM_C'])
    _node(db, traits=['CUSTOM_A'])
    _node(db)
    allocation = _row(db, None)
    allocation.traits = ['CUSTOM_A', 'CUSTOM_B']
    with db.reader() as conn:
        found = candidates.sample(
            conn, candidates.requirements_for(allocation), 10)
    assert [c.id for c in found] == [wide.id]


def test_sample_is_bounded_and_wraps_around(db):
    nodes = [_node(db) for _ in range(40)]
    allocation = _row(db, None)
    filters = candidates.requirements_for(allocation)
    seen = set()
    for seed in range(20):
        with db.reader() as conn:
            found = candidates.sample(conn, filters, 7, random.Random(seed))
        assert len(found) == 7 == len({c.id for c in found})
        seen.update(c.id for c in found)
    # Different start points: samples spread over the whole id range.
    assert len(seen) > 30
    assert seen <= {n.id for n in nodes}


def test_the_claim_is_fenced_on_affinity_and_rolls_back(conductor, db):
    node = _node(db)
    allocation = _row(db, conductor.ctx.conductor_id)
    requirements = candidates.requirements_for(allocation)
    with db.reader() as conn:
        [found] = candidates.sample(conn, requirements, 5)
    other = conductor_obj.register(db, 'other-host', '', 60)
    assert allocation_obj.Allocation.take_over(
        db, allocation.id, conductor.ctx.conductor_id, other.id)
    with pytest.raises(exception.AllocationGone):
        _claim(conductor, allocation, requirements, found)
    # The node half of the transaction was rolled back with it.
    assert node_obj.Node.get(db, node.id).instance_uuid is None
    assert not allocation_obj.Allocation.fail(
        db, allocation.id, conductor.ctx.conductor_id, 'late')
    assert allocation_obj.Allocation.get(db, allocation.id).state == (
        'allocating')


def test_a_locked_node_is_retried_then_reported(conductor, db):
    node = _node(db)
    conductor.conf.set_override('node_locked_retry_attempts', 2, 'conductor')
    conductor.conf.set_override('node_locked_retry_interval', 0, 'conductor')
    with task_manager.acquire(conductor.ctx, node.id, purpose='holding',
                              load_driver=False):
        allocation = allocator.create(conductor.ctx,
                                      {'resource_class': 'gold'}, [])
    assert allocation.state == 'error'
    assert 'held their locks through 2 attempts' in allocation.last_error
    # Once the lock is gone the same node is taken.
    allocation = allocator.create(conductor.ctx, {'resource_class': 'gold'},
                                  [])
    assert allocation.state == 'active' and allocation.node_id == node.id


def test_deleting_waits_for_a_held_node_lock_then_refuses(conductor, db):
    from ferrum.allocation import release
    node = _node(db)
    conductor.conf.set_override('node_locked_retry_attempts', 2, 'conductor')
    conductor.conf.set_override('node_locked_retry_interval', 0, 'conductor')
    allocation = allocator.create(conductor.ctx, {'resource_class': 'gold'},
                                  [])
    with task_manager.acquire(conductor.ctx, node.id, purpose='holding',
                              load_driver=False):
        with pytest.raises(exception.NodeLocked):
            release.destroy(conductor.ctx, allocation.uuid)
    assert node_obj.Node.get(db, node.id).allocation_id == allocation.id
    release.destroy(conductor.ctx, allocation.uuid)
    freed = node_obj.Node.get(db, node.id)
    assert freed.allocation_id is None and freed.instance_uuid is None
    with pytest.raises(exception.AllocationNotFound):
        allocation_obj.Allocation.get(db, allocation.id)


def test_a_node_changed_after_sampling_is_not_taken(conductor, db):
    node = _node(db)
    allocation = _row(db, conductor.ctx.conductor_id)
    requirements = candidates.requirements_for(allocation)
    with db.reader() as conn:
        [found] = candidates.sample(conn, requirements, 5)
    node_obj.Node.get(db, node.id).save(maintenance=True)
    assert not _claim(conductor, allocation, requirements, found)
    node_obj.Node.get(db, node.id).save(
        maintenance=False, instance_info={'image_source': 'x'})
    assert not _claim(conductor, allocation, requirements, found)
    node_obj.Node.get(db, node.id).save(instance_info={})
    assert _claim(conductor, allocation, requirements, found)
    taken = node_obj.Node.get(db, node.id)
    assert taken.instance_uuid == allocation.uuid
    assert taken.instance_info == {'traits': []}


def _claim(conductor, allocation, requirements, candidate):
    return allocation.claim(
        conductor.ctx.conductor_id, candidate.id, candidate.uuid,
        requirements.statements.claim,
        candidates.claim_params(requirements, candidate, allocation))


def test_start_up_resumes_own_allocating_rows(conf, db):
    first = service.ConductorService(conf, db=db)
    first.start(start_periodics=False)
    my_id = first.ctx.conductor_id
    first.stop()
    node = _node(db)
    left = _row(db, my_id, name='left-behind')
    again = service.ConductorService(conf, db=db)
    again.start(start_periodics=False)
    try:
        from tests.polling import wait_for
        done = wait_for(lambda: allocation_obj.Allocation.get(
            db, left.id).state != 'allocating', what='resumed allocation')
        assert done
        resumed = allocation_obj.Allocation.get(db, left.id)
        assert resumed.state == 'active' and resumed.node_id == node.id
    finally:
        again.stop()


def _second_conductor(conf_path, db, host):
    conf = ferrum_conf.new_conf()
    conf.set_override('state_path', conf_path)
    conf.set_override('host', host)
    svc = service.ConductorService(conf, db=db_api.Database(conf, url=db.url))
    svc.start(start_periodics=False)
    return svc


def test_orphans_of_a_dead_conductor_are_taken_over_once(
        conductor, db, tmp_path):
    nodes = [_node(db) for _ in range(6)]
    dead = conductor_obj.register(db, 'dead-host', '', 60)
    with db.writer() as conn:
        conn.execute(sa.update(conductor_obj.TABLE).where(
            conductor_obj.TABLE.c.id == dead.id).values(
                heartbeat_at=datetime.datetime(2020, 1, 1)))
    orphans = [_row(db, dead.id, name='orphan-%d' % i) for i in range(5)]
    alive_row = _row(db, conductor.ctx.conductor_id, name='mine')
    rival = _second_conductor(str(tmp_path), db, 'rival-host')
    try:
        barrier = threading.Barrier(2)

        def check(svc):
            barrier.wait()
            takeover.AllocationTakeover().check_orphaned_allocations(svc.ctx)

        threads = [threading.Thread(target=check, args=(svc,))
                   for svc in (conductor, rival)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        taken = {}
        for orphan in orphans:
            row = allocation_obj.Allocation.get(db, orphan.id)
            assert row.state == 'active', row.last_error
            assert row.conductor_affinity in (conductor.ctx.conductor_id,
                                              rival.ctx.conductor_id)
            taken.setdefault(row.node_id, []).append(row.uuid)
        assert all(len(v) == 1 for v in taken.values())
        assert set(taken) <= {n.id for n in nodes}
        # A live conductor's own allocating row is not someone's orphan.
        assert allocation_obj.Allocation.get(
            db, alive_row.id).state == 'allocating'
    finally:
        rival.stop()


def test_a_disabled_check_interval_disables_the_periodic(conf):
    from ferrum.periodic import worker
    conf.set_override('check_allocations_interval', 0, 'conductor')
    collected = worker.collect([takeover.AllocationTakeover()])
    assert collected
    spec = collected[0][2]
    assert spec.spacing(conf) == 0
