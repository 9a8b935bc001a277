# SPDX-License-Identifier: Apache-2.0
"""The placement allocation backend while the sync thread finds Placement
away (blackholed: every call would wait for its timeout): claims fail at
once, releases stay queued, and nothing on the API's path calls
Placement."""

import threading

from ferrum.objects import node as node_obj
from ferrum.placement import client as client_mod
from ferrum.placement import consumer_audit
from ferrum.placement import errors
from ferrum.placement import releases
from tests.functional.placement.scenario import AVAILABLE
from tests.functional.placement.scenario import auditor
from tests.functional.placement.scenario import holders
from tests.functional.placement.scenario import nodes
from tests.functional.placement.scenario import writes
from tests.polling import wait_for


def test_nothing_waits_for_placement_while_it_is_known_away(
        backend, db, pclient, pconf):
    (node,) = nodes(db, 1)
    manager = backend.manager
    kept = manager.create_allocation(
        {'resource_class': 'bm', 'candidate_nodes': [node.uuid]}, [])
    assert kept.state == 'active', kept.last_error
    me = threading.current_thread()
    on_my_thread = []
    blackholed = threading.Event()

    def blackhole(method, url, body):
        if not blackholed.is_set():
            return
        if threading.current_thread() is me:
            on_my_thread.append((method, url))
        raise errors.PlacementUnavailable(reason='timed out')

    backend.placement.client.observers.append(blackhole)
    blackholed.set()
    # The sync thread finds Placement away by itself: a node enrolled now
    # is pushed by a round that starts after the blackhole, and the thread
    # runs one round at a time, so no round that began before it (and
    # succeeds) can end the outage afterwards, as it could if the test
    # told the outage state itself.
    node_obj.Node.create(db, AVAILABLE)
    wait_for(lambda: backend.placement.outage.down is not None, timeout=30,
             what='the sync thread to find Placement away')
    failed = manager.create_allocation({'resource_class': 'bm'}, [])
    assert on_my_thread == []  # failed at once, no timeout waited for
    assert failed.state == 'error'
    assert 'Placement could not be reached' in failed.last_error
    assert 'sync thread' in failed.last_error
    manager.destroy_allocation(kept.uuid)
    assert releases.backlog(db) >= 1  # kept's release, queued
    assert on_my_thread == []
    blackholed.clear()
    wait_for(lambda: releases.backlog(db) == 0, timeout=30,
             what='the queued releases to drain')
    assert backend.placement.outage.down is None
    assert holders(pclient, node.uuid) == set()
    again = manager.create_allocation({'resource_class': 'bm'}, [])
    assert again.state == 'active', again.last_error


def test_a_refused_release_does_not_fail_the_delete(backend, db, pclient,
                                                    pconf):
    """The deletion is committed: a release Placement refuses is logged
    and left to the audit, not turned into an error."""
    (node,) = nodes(db, 1)
    allocation = backend.manager.create_allocation(
        {'resource_class': 'bm'}, [])

    def refuse(method, url, body):
        # Each try of the release, as if the consumer kept changing.
        if writes(allocation.uuid, method, url, body):
            raise errors.PlacementConflict(
                method=method, url=url, status=409,
                error_code=client_mod.CONCURRENT_UPDATE,
                detail='kept changing')

    observers = backend.placement.client.observers
    observers.append(refuse)
    backend.manager.destroy_allocation(allocation.uuid)
    assert releases.backlog(db) == 0
    observers.remove(refuse)
    found = consumer_audit.drift(auditor(pconf, db, pclient))
    assert [(d.kind, d.consumer) for d in found] == [
        (consumer_audit.ORPHAN, allocation.uuid)]
