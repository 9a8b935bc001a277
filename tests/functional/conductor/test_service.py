# SPDX-License-Identifier: Apache-2.0
"""Conductor service: heartbeats and graceful stop."""

import pytest

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import service
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state
from tests.polling import wait_for


def test_heartbeat_moves_forward(conf, db):
    conf.set_override('heartbeat_interval', 1, 'conductor')
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    try:
        first = conductor_obj.get(db, conf.host).heartbeat_at
        wait_for(lambda: conductor_obj.get(db, conf.host).heartbeat_at > first,
                 timeout=10, what='a second heartbeat')
    finally:
        svc.stop()


def _deploying(conf, db, seconds):
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    node = to_state(svc.manager, db, enroll(
        svc.manager, fake_deploy_seconds=seconds), 'available')
    svc.manager.do_provisioning_action(node.uuid, 'deploy')
    return svc, node


def test_graceful_stop_lets_running_work_finish(conf, db):
    conf.set_override('graceful_shutdown_timeout', 30, 'conductor')
    svc, node = _deploying(conf, db, 1)
    svc.stop()
    node = node_obj.Node.get(db, node.id)
    assert (node.provision_state, node.reservation) == (states.ACTIVE, None)
    assert not conductor_obj.get(db, conf.host).online


def test_graceful_stop_fails_unfinished_work_cleanly(conf, db):
    conf.set_override('graceful_shutdown_timeout', 0, 'conductor')
    svc, node = _deploying(conf, db, 2)
    workers = svc.ctx.workers
    svc.stop()
    node = node_obj.Node.get(db, node.id)
    assert (node.provision_state, node.reservation) == (states.DEPLOYFAIL,
                                                        None)
    assert 'stopped while the node was in "deploying"' in node.last_error
    # The abandoned worker finishes later but may not overwrite the failure.
    wait_for(lambda: workers.running == 0, timeout=30,
             what='the worker to end')
    assert node_obj.Node.get(db, node.id).provision_state == states.DEPLOYFAIL


def test_stopped_conductor_takes_no_new_work(conf, db):
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    node = enroll(svc.manager)
    manager = svc.manager
    svc.stop()
    with pytest.raises(exception.TemporaryFailure):
        manager.do_provisioning_action(node.uuid, 'manage')
    settled(db, node.id, states.ENROLL)
