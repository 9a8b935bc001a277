# SPDX-License-Identifier: Apache-2.0
"""The Placement push latency of the service metrics (issue 31), against
the real Placement: a round of pushes is timed as done, and a round that
finds Placement away as unavailable."""

import pytest

from ferrum.common import metrics
from ferrum.objects import node as node_obj
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import service
from ferrum.placement import worker


def rounds(outcome):
    for sample in metrics.PLACEMENT_PUSH_SECONDS.collect()[0].samples:
        if (sample.name.endswith('_count')
                and sample.labels['outcome'] == outcome):
            return sample.value
    return 0.0


def _worker(pconf, db):
    return worker.SyncWorker(pconf, db, 'c1', service.PlacementService(
        pconf, db, client_mod.PlacementClient(pconf)))


def test_a_round_of_pushes_is_timed(pconf, db):
    for _ in range(2):
        node_obj.Node.create(db, {
            'driver': 'fake-hardware', 'resource_class': 'bm',
            'provision_state': 'available', 'power_state': 'power off'})
    before = rounds('done')
    assert _worker(pconf, db).drain_once() == 2
    assert rounds('done') == before + 1


def test_a_round_without_placement_is_timed_as_unavailable(pconf, db):
    node_obj.Node.create(db, {'driver': 'fake-hardware',
                              'resource_class': 'bm',
                              'provision_state': 'available'})
    # Nothing listens on port 9 (discard) of loopback.
    pconf.set_override('endpoint', 'http://127.0.0.1:9',
                       group='placement')
    before = rounds('unavailable')
    with pytest.raises(errors.PlacementUnavailable):
        _worker(pconf, db).drain_once()
    assert rounds('unavailable') == before + 1
