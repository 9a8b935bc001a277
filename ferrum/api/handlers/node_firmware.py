# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/firmware``: a node's firmware components (1.86).

What the node's firmware interface last read (when a verification ended
or a cleaning started): empty for a node whose interface is
``no-firmware``, as Ironic's answer for such a node. 404 before 1.86,
as Ironic; ``vendor``, ``model`` and ``serial_number`` from 1.114.
"""

from typing import Any

import flask

from ferrum.api import access
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.views import firmware_component as view
from ferrum.common import exception
from ferrum.objects import firmware_component

_MINOR = 86
_IDENTITY_MINOR = 114


def _check_identity_fields() -> None:
    """Ironic's own refusal of the 1.114 fields asked for earlier."""
    if microversion.at_least(_IDENTITY_MINOR):
        return
    asked = set((flask.request.args.get('fields') or '').split(','))
    early = sorted(asked & {'vendor', 'model', 'serial_number'})
    if early:
        raise exception.InvalidParameterValue(reason=(
            'Fields %s are not allowed in this API version. They require '
            'at least API version 1.%d.' % (', '.join(early),
                                            _IDENTITY_MINOR)))


def list_firmware(node_ident: str) -> dict[str, Any]:
    microversion.endpoint(_MINOR, '/v1/nodes/{node}/firmware')
    node = access.node(node_ident, 'baremetal:node:firmware:get')
    _check_identity_fields()
    available = view.available_fields()
    fields = listing.parse_fields(available, since_minor=None) or available
    return {'firmware': [
        view.render(component, fields) for component in
        firmware_component.list_for_node(services.db(), node.id)]}
