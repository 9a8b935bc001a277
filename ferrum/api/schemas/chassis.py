# SPDX-License-Identifier: Apache-2.0
"""JSON Schemas of chassis request bodies (Ironic's)."""

from typing import Any

#: Fields a client may set, with their JSON types.
_WRITABLE: dict[str, Any] = {
    'description': {'type': ['string', 'null'], 'maxLength': 255},
    'extra': {'type': ['object', 'null']},
}
#: Fields that may be changed by PATCH.
UPDATABLE = frozenset(_WRITABLE)

CREATE: dict[str, Any] = {
    'type': 'object',
    # The UUID is checked in code, for a clearer message than a pattern's.
    'properties': {**_WRITABLE, 'uuid': {'type': ['string', 'null']}},
    'additionalProperties': False,
}

#: The values of changed fields, checked after a patch is applied.
UPDATE: dict[str, Any] = {
    'type': 'object',
    'properties': _WRITABLE,
    'additionalProperties': False,
}
