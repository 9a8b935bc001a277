# SPDX-License-Identifier: Apache-2.0
"""The body of ``POST /v1/nodes/{node}/vifs``, as Ironic's (API 1.28).

``id`` names the VIF: a UUID or a name of RFC 3986 unreserved characters.
Other keys are passed to the network interface as they are (Ironic's
``port_uuid`` chooses the port); port groups are not served.
"""

from typing import Any

ATTACH: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'id': {'type': 'string', 'minLength': 1, 'maxLength': 255,
               'pattern': '^[A-Za-z0-9._~-]+$'},
        'port_uuid': {'type': 'string', 'maxLength': 36},
    },
    'required': ['id'],
    'additionalProperties': True,
}
