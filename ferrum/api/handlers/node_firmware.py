# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/firmware``: a node's firmware components (1.86).

What the node's firmware interface last read (when a verification ended
or a cleaning started): empty for a node whose interface is
``no-firmware``, as Ironic's answer for such a node. 404 before 1.86,
as Ironic; ``vendor``, ``model`` and ``serial_number`` from 1.114.
"""

from typing import Any

from ferrum.api import access
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.views import firmware_component as view
from ferrum.common import exception
from ferrum.objects import firmware_component

_MINOR = 86
_IDENTITY_MINOR = 114


def _fields() -> list[str]:
    """The fields asked for (all the version shows by default); the 1.114
    ones asked for earlier get Ironic's own refusal."""
    asked = listing.parse_fields(firmware_component.FIELDS, since_minor=None)
    available = view.available_fields()
    early = sorted(set(asked or ()) - set(available))
    if early:
        raise exception.InvalidParameterValue(reason=(
            'Fields %s are not allowed in this API version. They require '
            'at least API version 1.%d.' % (', '.join(early),
                                            _IDENTITY_MINOR)))
    return asked or available


def list_firmware(node_ident: str) -> dict[str, Any]:
    microversion.endpoint(_MINOR, '/v1/nodes/{node}/firmware')
    node = access.node(node_ident, 'baremetal:node:firmware:get')
    fields = _fields()
    return {'firmware': [
        view.render(component, fields) for component in
        firmware_component.list_for_node(services.db(), node.id)]}
