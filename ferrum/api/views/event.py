# SPDX-License-Identifier: Apache-2.0
"""An event of ``GET /v1/events`` (ferrum's extension): every recorded
column but the internal node id, under its history names; of a node's
history entry, the error text and the user only to who may read them on
the node (:class:`Readable`)."""

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from ferrum.api import policy

FIELDS = ('id', 'uuid', 'created_at', 'event_type', 'severity', 'event',
          'node_uuid', 'allocation_uuid', 'lease_uuid', 'owner', 'lessee',
          'state', 'target_provision_state', 'duration_seconds',
          'conductor', 'user')


#: The allocation events that name a node (``active on node ...``) are
#: not the node's history; its lease entries are (an allocation's or a
#: lease's own events name no node).
_ALLOCATION = 'allocation'

#: Whether the caller may read something of a node, by its owner and
#: lessee.
NodeRule = Callable[[str | None, str | None], bool]


@dataclasses.dataclass(frozen=True)
class Readable:
    """What the caller may read of the events it sees."""

    errors: NodeRule  #: a node's history entry: the error of an ``ERROR``
    users: NodeRule   #: a node's history entry: who asked for the change
    #: the caller's project, whose users it may see on the allocation and
    #: lease events (None: every project's, a system reader)
    project: str | None = None


def render(row: Mapping[str, Any], readable: Readable) -> dict[str, Any]:
    result = {name: row[name] for name in FIELDS
              if name not in ('created_at', 'user')}
    result['created_at'] = row['created_at'].isoformat() + '+00:00'
    result['user'] = row['user_id']
    # By the node's uuid, which stays when the node is deleted (its id
    # does not): a deleted node's errors stay the owner's.
    if row['node_uuid'] and row['event_type'] != _ALLOCATION:
        owner, lessee = row['owner'], row['lessee']
        if row['severity'] == 'ERROR' and not readable.errors(owner, lessee):
            result['event'] = policy.REDACTED_NODE_FIELDS['last_error']
        if row['user_id'] and not readable.users(owner, lessee):
            result['user'] = None
    elif (row['user_id'] and readable.project is not None
          and row['project_id'] != readable.project):
        # An owner's admin who booked a lease for a lessee: the lessee
        # sees the event, not another project's user.
        result['user'] = None
    return result
