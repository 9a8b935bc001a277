# SPDX-License-Identifier: Apache-2.0
"""The sync state an operator looks at: the API's ``GET /v1/placement/status``
and ``ferrum-placement status`` render the same document.

It is read from the database only (the outbox, the per-node records and
each conductor's last word on Placement), so the API answers at once even
while Placement is down, and shows every conductor's view, not one.
"""

from __future__ import annotations

import datetime
from typing import Any

from oslo_config import cfg

from ferrum.conf import placement as placement_conf
from ferrum.db import api as db_api
from ferrum.placement import lease_audit
from ferrum.placement import outbox
from ferrum.placement import records
from ferrum.placement import releases

#: Most nodes listed under "problems"; the count is always exact.
MAX_PROBLEMS = 100


def _iso(value: datetime.datetime | None) -> str | None:
    return None if value is None else value.isoformat() + '+00:00'


def summary(conf: cfg.ConfigOpts, db: db_api.Database) -> dict[str, Any]:
    """The status document (see doc/placement.md, "Sync state")."""
    queued = outbox.backlog(db)
    problems = records.problems(db, MAX_PROBLEMS)
    conductors = records.statuses(db)
    errors = [c for c in conductors if c['last_error']]
    return {
        'enabled': placement_conf.enabled(conf),
        # Consumers of deleted allocations not yet released (the placement
        # allocation backend, while Placement is away).
        'consumer_releases': releases.backlog(db),
        # Classes of leases that are over, not yet deleted from Placement.
        'lease_classes': lease_audit.classes_to_delete(db),
        'backlog': {'changes': queued.size, 'nodes': queued.nodes,
                    'oldest_change_at': _iso(queued.oldest)},
        'last_error': max(errors, key=lambda c: c['since'])['last_error']
        if errors else None,
        'conductors': [{'hostname': c['host'], 'placement': c['state'],
                        'last_error': c['last_error'],
                        'since': _iso(c['since'])} for c in conductors],
        'problems': [{'node_uuid': r.node_uuid, 'state': r.state,
                      'last_error': r.last_error,
                      'updated_at': _iso(r.updated_at)} for r in problems],
    }
