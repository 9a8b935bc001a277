# SPDX-License-Identifier: Apache-2.0
"""An event of ``GET /v1/events`` (ferrum's extension): every recorded
column but the internal node id, under its history names."""

from collections.abc import Mapping
from typing import Any

FIELDS = ('id', 'uuid', 'created_at', 'event_type', 'severity', 'event',
          'node_uuid', 'allocation_uuid', 'lease_uuid', 'owner', 'lessee',
          'state', 'target_provision_state', 'duration_seconds',
          'conductor', 'user')


def render(row: Mapping[str, Any]) -> dict[str, Any]:
    result = {name: row[name] for name in FIELDS
              if name not in ('created_at', 'user')}
    result['created_at'] = row['created_at'].isoformat() + '+00:00'
    result['user'] = row['user_id']
    return result
