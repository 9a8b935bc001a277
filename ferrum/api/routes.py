# SPDX-License-Identifier: Apache-2.0
"""The route table: URL → {HTTP method: handler}. The only place routes live.

Handlers return a dict (rendered as JSON with status 200) or a Flask
response. Path parameters use no converters, so that a handler, not the
router, decides what a malformed identifier means.
"""

from collections.abc import Callable
from typing import Any

from ferrum.api.handlers import node
from ferrum.api.handlers import root

Handler = Callable[..., Any]

ROUTES: dict[str, dict[str, Handler]] = {
    '/': {'GET': root.root},
    '/v1': {'GET': root.v1},
    '/v1/nodes': {'GET': node.list_nodes},
    '/v1/nodes/detail': {'GET': node.list_details},
    '/v1/nodes/<node_ident>': {'GET': node.get_node},
}
