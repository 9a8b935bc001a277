# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/traits``: list, replace, add and remove traits (1.37).

Traits are plain rows the conductor does not act on, so the API writes them
directly; allocations read them when matching nodes.
"""

import contextlib
from collections.abc import Iterator
from typing import Any

import flask

from ferrum.api import access
from ferrum.api import body
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.schemas import trait as trait_schema
from ferrum.common import exception
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj


def _node(node_ident: str, rule: str) -> node_obj.Node:
    microversion.require(37, 'Node traits')
    return access.node(node_ident, rule)


def _no_content() -> flask.Response:
    return flask.Response(status=204)


@contextlib.contextmanager
def _writing(node: node_obj.Node) -> Iterator[None]:
    """A node deleted since it was looked up is named as the client named
    it, not by the row id the trait writers see."""
    try:
        yield
    except exception.NodeNotFound:
        raise exception.NodeNotFound(node=node.uuid) from None


def list_traits(node_ident: str) -> dict[str, Any]:
    node = _node(node_ident, 'baremetal:node:traits:list')
    return {'traits': trait_obj.get_for_node(services.db(), node.id)}


def set_traits(node_ident: str) -> flask.Response:
    node = _node(node_ident, 'baremetal:node:traits:set')
    traits = body.json_body(trait_schema.SET_TRAITS)['traits']
    for trait in traits:
        trait_schema.check(trait)
    trait_schema.check_count(len(set(traits)))
    with _writing(node):
        trait_obj.set_for_node(services.db(), node.id, traits)
    return _no_content()


def add_trait(node_ident: str, trait_name: str) -> flask.Response:
    node = _node(node_ident, 'baremetal:node:traits:set')
    trait_schema.check(trait_name)
    with _writing(node):
        trait_obj.add(services.db(), node.id, trait_name,
                      check_count=trait_schema.check_count)
    return _no_content()


def remove_all_traits(node_ident: str) -> flask.Response:
    node = _node(node_ident, 'baremetal:node:traits:delete')
    with _writing(node):
        trait_obj.set_for_node(services.db(), node.id, [])
    return _no_content()


def remove_trait(node_ident: str, trait_name: str) -> flask.Response:
    node = _node(node_ident, 'baremetal:node:traits:delete')
    if not trait_obj.remove(services.db(), node.id, trait_name):
        raise exception.NotFound(
            what='trait %s on node %s' % (trait_name[:300], node.uuid))
    return _no_content()
