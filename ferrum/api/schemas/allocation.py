# SPDX-License-Identifier: Apache-2.0
"""JSON Schemas of allocation request bodies, as Ironic's (API 1.52-1.60).

Rules beyond a schema live in :mod:`ferrum.api.handlers.allocation`: names
follow node-name rules and must not look like a UUID, traits follow the
node-trait rules, and the fields newer than the request's version are
refused with 406.
"""

from typing import Any

from ferrum.api.schemas import node as node_schema

_NAME = node_schema.NAME
#: Ironic sets no bound; ferrum takes this many candidates, which covers
#: any rack or pod a consumer names, and keeps one request's work small.
MAX_CANDIDATE_NODES = 1000

#: Body of POST /v1/allocations.
CREATE: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'resource_class': {'type': ['string', 'null'], 'minLength': 1,
                           'maxLength': 80},
        'traits': {'type': ['array', 'null'], 'items': {'type': 'string'},
                   'maxItems': 50},
        'candidate_nodes': {'type': ['array', 'null'],
                            'maxItems': MAX_CANDIDATE_NODES,
                            'items': {'type': 'string', 'minLength': 1,
                                      'maxLength': 255}},
        'name': _NAME,
        'uuid': {'type': ['string', 'null']},
        'extra': {'type': ['object', 'null']},
        'node': {'type': ['string', 'null'], 'minLength': 1,
                 'maxLength': 255},
        'owner': {'type': ['string', 'null'], 'maxLength': 255},
    },
    'additionalProperties': False,
}

#: Fields PATCH may change (API 1.57).
UPDATABLE = frozenset({'name', 'extra'})

#: The changed fields after a PATCH is applied.
UPDATE: dict[str, Any] = {
    'type': 'object',
    'properties': {'name': _NAME, 'extra': {'type': 'object'}},
    'additionalProperties': False,
}

#: Values of the ``state`` list filter.
STATES = ('allocating', 'active', 'error')
