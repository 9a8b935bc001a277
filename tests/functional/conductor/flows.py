# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the conductor flow tests."""

from ferrum.objects import node as node_obj
from tests.conftest import wait_for


def settled(db, node_id, state, timeout=10.0):
    """Wait until the node is in ``state`` and unlocked; return it."""
    def check():
        node = node_obj.Node.get(db, node_id)
        return node if (node.provision_state == state
                        and node.reservation is None) else None
    try:
        return wait_for(check, timeout, what='node in %s' % state)
    except BaseException:
        node = node_obj.Node.get(db, node_id)
        raise AssertionError('node is in %s (locked by %s), last_error %s; '
                             'expected %s' % (node.provision_state,
                                              node.reservation,
                                              node.last_error, state))


def enroll(manager, **driver_info):
    return manager.create_node({'driver': 'fake-hardware',
                                'driver_info': driver_info})


def to_state(manager, db, node, state):
    """Drive a fresh node to manageable, available or active."""
    path = {'manageable': ['manage'],
            'available': ['manage', 'provide'],
            'active': ['manage', 'provide', 'deploy']}[state]
    targets = {'manage': 'manageable', 'provide': 'available',
               'deploy': 'active'}
    for action in path:
        manager.do_provisioning_action(node.uuid, action)
        settled(db, node.id, targets[action])
    return node_obj.Node.get(db, node.id)


def resume(manager, node):
    """End the node's wait as a driver does: the fake vendor's passthru."""
    return manager.vendor_passthru(node.uuid, 'finish_wait', 'POST', {})
