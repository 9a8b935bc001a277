# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the conductor flow tests (the kit's, and three more)."""

import contextlib

from ferrum.testing.flows import settled
from ferrum.testing.flows import to_state

__all__ = ['busy_workers', 'enroll', 'resume', 'settled', 'to_state']


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
