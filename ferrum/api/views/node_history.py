# SPDX-License-Identifier: Apache-2.0
"""A node history entry as the API shows it (Ironic's API 1.78).

A list shows ``uuid``, ``created_at``, ``severity`` and ``event``, the
event cut to 255 characters (251 and "...") as Ironic cuts it; with
``detail`` and for one entry, ``event_type``, ``conductor`` and ``user``
as well, and the whole event; with detail, ``project`` (who asked) from
1.113, and ``state``, ``target_provision_state`` and ``duration_seconds``
(the state entered, its target, the time spent in the state left) from
1.115, as Ironic.
"""

from collections.abc import Mapping
from typing import Any

from ferrum.api import listing
from ferrum.api import microversion

LIST_FIELDS = ('uuid', 'created_at', 'severity', 'event')
DETAIL_FIELDS = LIST_FIELDS + ('event_type', 'conductor', 'user')
#: Ironic's cut of an event in a list without detail.
MAX_LISTED = 255


def render(node_uuid: str, row: Mapping[str, Any],
           detail: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        'uuid': row['uuid'],
        'created_at': row['created_at'].isoformat() + '+00:00',
        'severity': row['severity'],
        'event': row['event'],
    }
    if detail:
        result.update(event_type=row['event_type'],
                      conductor=row['conductor'], user=row['user_id'])
        if microversion.at_least(113):
            result['project'] = row['project_id']
        if microversion.at_least(115):
            result.update(state=row['state'],
                          target_provision_state=row[
                              'target_provision_state'],
                          duration_seconds=row['duration_seconds'])
    elif len(result['event']) > MAX_LISTED:
        result['event'] = result['event'][:MAX_LISTED - 4] + '...'
    result['links'] = listing.resource_links(
        'nodes/%s/history' % node_uuid, row['uuid'])
    return result
