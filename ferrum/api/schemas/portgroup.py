# SPDX-License-Identifier: Apache-2.0
"""JSON Schemas of port group request bodies, and their names' grammar.

The fields and types are Ironic's: every field but ``node_uuid`` may be
null; ``address`` is optional (a bond takes the MAC of a member when it
has none); ``standalone_ports_supported`` is a boolean or a string the
``baremetal`` CLI sends ("True"). ``dynamic_portgroup`` is read-only.
"""

import re
from typing import Any

from ferrum.common import exception
from ferrum.objects import base

#: RFC 3986 unreserved characters: Ironic's logical names from 1.10.
_NAME = re.compile(r'^[A-Za-z0-9._~-]{1,255}$')
#: Path words under /v1/portgroups that a name would shadow.
_RESERVED_NAMES = ('detail',)

#: Fields a client may set, with their JSON types.
_WRITABLE: dict[str, Any] = {
    'address': {'type': ['string', 'null']},
    'name': {'type': ['string', 'null']},
    # UUIDs are checked in code, for a clearer message than a pattern's.
    'node_uuid': {'type': 'string'},
    'extra': {'type': ['object', 'null']},
    'mode': {'type': ['string', 'null'], 'maxLength': 255},
    'properties': {'type': ['object', 'null']},
    'standalone_ports_supported': {'type': ['boolean', 'string', 'null']},
    'physical_network': {'type': ['string', 'null'], 'maxLength': 64},
    'category': {'type': ['string', 'null'], 'maxLength': 80},
}
#: Fields that may be changed by PATCH (Ironic's PATCH_ALLOWED_FIELDS).
UPDATABLE = frozenset(_WRITABLE)

CREATE: dict[str, Any] = {
    'type': 'object',
    'properties': {**_WRITABLE, 'uuid': {'type': ['string', 'null']}},
    'required': ['node_uuid'],
    'additionalProperties': False,
}

#: The values of changed fields, checked after a patch is applied.
UPDATE: dict[str, Any] = {
    'type': 'object',
    'properties': _WRITABLE,
    'additionalProperties': False,
}


def check_name(name: str, what: str = 'portgroup') -> None:
    """Refuse (400) a name that could not address the resource.

    Ironic's grammar (letters, digits, "-._~"); ferrum also refuses a name
    that looks like a UUID (a lookup would take it for one) and "detail".
    """
    if not _NAME.match(name):
        raise exception.InvalidParameterValue(
            reason="Cannot use invalid %s name '%s': use letters, digits "
                   'and "-._~", at most 255.' % (what, name[:100]))
    if base.is_uuid_like(name) or name in _RESERVED_NAMES:
        raise exception.InvalidParameterValue(
            reason="A %s name cannot look like a UUID or be 'detail': %s"
                   % (what, name))
