# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/history``: a node's history, as Ironic's API 1.78.

Below 1.78 both routes answer 404, as Ironic's do. Both check
``baremetal:node:history:get`` on the node (Ironic's default: a system
reader or the owner's reader; a lessee is refused, 403, and a project
that may not see the node gets 404).
"""

from typing import Any

from ferrum.api import access
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.views import node_history as history_view
from ferrum.common import exception
from ferrum.objects import base
from ferrum.objects import node as node_obj
from ferrum.objects import node_history

_MINOR = 78
_RULE = 'baremetal:node:history:get'
#: Entries are listed in the order they were recorded, which is the order
#: of created_at (Ironic's only useful sort key here).
_SORTABLE = ('created_at',)


def _node(node_ident: str, what: str) -> node_obj.Node:
    if not microversion.at_least(_MINOR):
        raise exception.NotFoundAtVersion(
            what=what, minor=_MINOR, header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))
    return access.node(node_ident, _RULE)


def list_history(node_ident: str) -> dict[str, Any]:
    node = _node(node_ident, '/v1/nodes/{node}/history')
    detail = bool(listing.parse_bool('detail'))
    page = listing.parse_page(_SORTABLE, default_sort='created_at')
    marker = None
    if page.marker is not None:
        if not base.is_uuid_like(page.marker):
            raise exception.InvalidParameterValue(
                reason='marker must be the UUID of a history entry, not '
                       '"%s".' % page.marker[:100])
        marker = node_history.get(services.db(), node.id, page.marker)
    rows = node_history.list_for(services.db(), node.id, page.limit, marker,
                                 page.sort_dir)
    result: dict[str, Any] = {'history': [
        history_view.render(node.uuid, row, detail) for row in rows]}
    result.update(listing.next_link(page, len(rows),
                                    rows[-1]['uuid'] if rows else None))
    return result


def get_history_entry(node_ident: str, event_ident: str) -> dict[str, Any]:
    node = _node(node_ident, '/v1/nodes/{node}/history/{event}')
    if not base.is_uuid_like(event_ident):
        raise exception.InvalidParameterValue(
            reason='A history entry is named by its UUID, not "%s".'
                   % event_ident[:100])
    return history_view.render(
        node.uuid, node_history.get(services.db(), node.id, event_ident),
        detail=True)
