# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/children``: the UUIDs of a node's child nodes (1.83).

As Ironic: 404 before 1.83 and for a parent the caller may not see; a
project-scoped caller sees only the children of its own project. The
``links`` entry points at the node list filtered by the parent.
"""

from typing import Any

from ferrum.api import access
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import services
from ferrum.objects import node as node_obj

_MINOR = 83


def list_children(node_ident: str) -> dict[str, Any]:
    microversion.endpoint(_MINOR, '/v1/nodes/{node}/children')
    parent = access.node(node_ident, 'baremetal:node:get')
    filters: dict[str, Any] = {'parent_node': parent.uuid}
    project = access.list_project('node')
    if project is not None:
        filters['project'] = project
    rows = node_obj.Node.list_columns(services.db(), ['uuid'], filters)
    return {'children': [row.uuid for row in rows],
            'links': {'href': '%sv1/nodes?parent_node=%s'
                              % (listing.base_url(), parent.uuid),
                      'rel': 'children'}}
