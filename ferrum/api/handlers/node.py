# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes``: list, detail and get (more verbs land with issue 3)."""

from typing import Any

import flask

from ferrum.api.views import node as node_view
from ferrum.objects import node as node_obj


def _db() -> Any:
    return flask.current_app.config['FERRUM_DB']


def list_nodes() -> dict[str, Any]:
    return {'nodes': [node_view.render(n, detail=False)
                      for n in node_obj.Node.list(_db())]}


def list_details() -> dict[str, Any]:
    return {'nodes': [node_view.render(n, detail=True)
                      for n in node_obj.Node.list(_db())]}


def get_node(node_ident: str) -> dict[str, Any]:
    return node_view.render(node_obj.Node.get(_db(), node_ident),
                            detail=True)
