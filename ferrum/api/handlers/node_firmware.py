# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/firmware``: a node's firmware components (1.86).

Every node's firmware interface is ``no-firmware`` (ferrum runs no
firmware updates), so the list is empty, as Ironic's answer for such a
node. 404 before 1.86, as Ironic.
"""

from typing import Any

from ferrum.api import access
from ferrum.api import microversion

_MINOR = 86


def list_firmware(node_ident: str) -> dict[str, Any]:
    microversion.endpoint(_MINOR, '/v1/nodes/{node}/firmware')
    access.node(node_ident, 'baremetal:node:firmware:get')
    return {'firmware': []}
