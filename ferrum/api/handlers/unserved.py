# SPDX-License-Identifier: Apache-2.0
"""Endpoints of Ironic versions ferrum claims without serving their
feature: each answers as Ironic answers when the feature has nothing to
give (see doc/api-versions.md, "What ferrum deliberately does not serve").

Before its version each is the 404 of an endpoint that does not exist
yet, as in Ironic.
"""

from typing import NoReturn

from ferrum.api import access
from ferrum.api import microversion
from ferrum.common import exception


class InventoryNotFound(exception.NotFound):
    msg_fmt = ('Node inventory record for node %(node)s could not be '
               'found. (ferrum stores no inspection data.)')


class NoNodeInspecting(exception.NotFound):
    msg_fmt = ('No node is waiting for inspection data: ferrum inspects '
               'out of band only.')


def get_inventory(node_ident: str) -> NoReturn:
    """1.81: Ironic's answer for a node never inspected in band."""
    microversion.endpoint(81, '/v1/nodes/{node}/inventory')
    node = access.node(node_ident, 'baremetal:node:inventory:get')
    raise InventoryNotFound(node=node.uuid)


def continue_inspection() -> NoReturn:
    """1.84: Ironic's answer when no node matches the ramdisk's data."""
    microversion.endpoint(84, '/v1/continue_inspection')
    raise NoNodeInspecting()
