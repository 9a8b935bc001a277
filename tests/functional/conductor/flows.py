# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the conductor flow tests (the kit's, and three more)."""

import contextlib

from ferrum.conductor import recovery
from ferrum.conductor import service
from ferrum.objects import conductor as conductor_obj
from ferrum.testing.flows import settled
from ferrum.testing.flows import to_state
from tests.polling import wait_for

__all__ = ['after_kill', 'busy_workers', 'enroll', 'resume', 'settled',
           'to_state']


def enroll(manager, **driver_info):
    return manager.create_node({'driver': 'fake-hardware',
                                'driver_info': driver_info})


def resume(manager, node):
    """End the node's wait as a driver does: the fake vendor's passthru."""
    return manager.vendor_passthru(node.uuid, 'finish_wait', 'POST', {})


@contextlib.contextmanager
def busy_workers(conductor):
    """Occupy every worker slot, as a burst of operations would."""
    pool = conductor.ctx.workers
    with pool.occupied() as held:
        assert held == pool.size
        yield


def after_kill(conf, db, recovered_by):
    """The started conductor that finds a killed one's work: the same host
    restarting (``same``), or another conductor once the dead one's
    heartbeat is old enough (``other``; ``conf`` is changed for it)."""
    if recovered_by != 'same':
        dead = conf.host
        conf.set_override('host', 'other-conductor')
        conf.set_override('heartbeat_timeout', 2, 'conductor')
    conductor = service.ConductorService(conf, db=db)
    conductor.start(start_periodics=False)
    if recovered_by != 'same':
        wait_for(lambda: any(c.hostname == dead for c in
                             conductor_obj.list_silent(db, 2)),
                 timeout=10, interval=0.1,
                 what='the killed conductor to be seen as dead')
        recovery.DeadConductors().release_dead_conductor_locks(
            conductor.ctx)
    return conductor
