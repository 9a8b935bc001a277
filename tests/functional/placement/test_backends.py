# SPDX-License-Identifier: Apache-2.0
"""The allocation backend is chosen once at start-up, apart from the
conductor's one Placement handle, which is there whenever ``[placement]``
is configured, whatever the backend."""

import sqlalchemy as sa

from ferrum.allocation import backends
from ferrum.allocation import placement_backend
from ferrum.placement import releases
from ferrum.placement import service
from tests.functional.placement.scenario import consumer_body
from tests.functional.placement.scenario import nodes


def _queued_releases(db):
    with db.reader() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(
            releases.TABLE)).scalar()


def test_the_database_backend_claims_nothing_in_placement(synced, db,
                                                          pclient):
    ctx = synced.ctx
    assert isinstance(ctx.allocations, backends.DatabaseBackend)
    # The handle is there for the leases and the sync all the same.
    assert isinstance(ctx.placement, service.PlacementService)
    assert not ctx.placement.claims_allocations
    nodes(db, 2)
    allocation = synced.manager.create_allocation(
        {'resource_class': 'bm'}, [])
    assert allocation.state == 'active', allocation.last_error
    assert not consumer_body(pclient, allocation.uuid).get('allocations')
    synced.manager.destroy_allocation(allocation.uuid)
    assert _queued_releases(db) == 0


def test_the_placement_backend_shares_the_sync_threads_outage(backend):
    ctx = backend.ctx
    assert isinstance(ctx.allocations, placement_backend.PlacementBackend)
    assert isinstance(ctx.placement, service.PlacementService)
    assert ctx.placement.claims_allocations
    # One outage state, given to both at construction: claims fail fast
    # from the moment the sync thread finds Placement away.
    assert ctx.placement.outage is backend.placement.outage
