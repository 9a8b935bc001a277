# SPDX-License-Identifier: Apache-2.0
"""An event of ``GET /v1/events`` (ferrum's extension): every recorded
column but the internal node id, under its history names."""

from collections.abc import Callable, Mapping
from typing import Any

from ferrum.api.views import node as node_view

FIELDS = ('id', 'uuid', 'created_at', 'event_type', 'severity', 'event',
          'node_uuid', 'allocation_uuid', 'lease_uuid', 'owner', 'lessee',
          'state', 'target_provision_state', 'duration_seconds',
          'conductor', 'user')


#: The event types that are not a node's history (their text holds no
#: node error).
_NOT_HISTORY = ('allocation', 'lease')


def render(row: Mapping[str, Any],
           error_readable: Callable[[str | None, str | None], bool]
           ) -> dict[str, Any]:
    """:param error_readable: whether the caller may read the errors of a
        node with this owner and lessee."""
    result = {name: row[name] for name in FIELDS
              if name not in ('created_at', 'user')}
    if (row['severity'] == 'ERROR' and row['node_uuid']
            and row['event_type'] not in _NOT_HISTORY
            and not error_readable(row['owner'], row['lessee'])):
        result['event'] = node_view.REDACTED['last_error']
    result['created_at'] = row['created_at'].isoformat() + '+00:00'
    result['user'] = row['user_id']
    return result
