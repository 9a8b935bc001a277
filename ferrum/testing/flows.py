# SPDX-License-Identifier: Apache-2.0
"""Driving nodes through the real verbs, and waiting for them to settle."""

import time
from typing import Any

from ferrum.db import api as db_api
from ferrum.objects import node as node_obj

#: The verbs that take a fresh node to each state, and where each ends.
_PATHS = {'manageable': ['manage'], 'available': ['manage', 'provide'],
          'active': ['manage', 'provide', 'active']}
_ENDS = {'manage': 'manageable', 'provide': 'available', 'active': 'active'}


def settled(db: db_api.Database, node_id: int | str, state: str,
            timeout: float = 10.0) -> node_obj.Node:
    """Wait until the node is in ``state`` and unlocked; return it.

    Polls (no fixed sleep) until ``timeout`` seconds have passed, then
    raises ``AssertionError`` saying where the node is and its
    ``last_error``, which is what a failing test needs to show.
    """
    deadline = time.monotonic() + timeout
    while True:
        node = node_obj.Node.get(db, node_id)
        if node.provision_state == state and node.reservation is None:
            return node
        if time.monotonic() > deadline:
            raise AssertionError(
                'node %s is in %s (locked by %s), last_error %s; expected %s'
                % (node.uuid, node.provision_state, node.reservation,
                   node.last_error, state))
        time.sleep(0.005)


def to_state(manager: Any, db: db_api.Database, node: node_obj.Node,
             state: str, timeout: float = 10.0) -> node_obj.Node:
    """Drive a node from ``enroll`` to manageable, available or active.

    :param manager: the conductor's manager (``ferrum_conductor.manager``).
    """
    for verb in _PATHS[state]:
        manager.do_provisioning_action(node.uuid, verb)
        settled(db, node.id, _ENDS[verb], timeout)
    return node_obj.Node.get(db, node.id)
