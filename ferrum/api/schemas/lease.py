# SPDX-License-Identifier: Apache-2.0
"""JSON Schemas of lease request bodies (ferrum's /v1/leases extension).

Rules beyond a schema live in :mod:`ferrum.api.handlers.lease` and
:mod:`ferrum.leases.windows`: times are ISO 8601, the window follows the
``[lease]`` options, traits follow the node-trait rules and candidate
nodes must exist.
"""

from typing import Any

from ferrum.api.schemas import allocation as allocation_schema
from ferrum.api.schemas import node as node_schema
from ferrum.common import lease_statuses as statuses

#: The most nodes one lease may hold: a pod, not a whole fleet per request.
MAX_COUNT = 1000
_TIME = {'type': 'string', 'minLength': 1, 'maxLength': 64}
_PROJECT = {'type': 'string', 'minLength': 1, 'maxLength': 255}

#: Body of POST /v1/leases.
CREATE: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'name': node_schema.NAME,
        'uuid': {'type': ['string', 'null']},
        'project': _PROJECT,
        'owner': {'type': ['string', 'null'], 'minLength': 1,
                  'maxLength': 255},
        'resource_class': {'type': ['string', 'null'], 'minLength': 1,
                           'maxLength': 80},
        'traits': {'type': ['array', 'null'], 'items': {'type': 'string'},
                   'maxItems': 50},
        'candidate_nodes': {
            'type': ['array', 'null'],
            'maxItems': allocation_schema.MAX_CANDIDATE_NODES,
            'items': {'type': 'string', 'minLength': 1, 'maxLength': 255}},
        # Bounded by MAX_COUNT in the handler, whose message says so.
        'count': {'type': 'integer'},
        'start': {'anyOf': [_TIME, {'type': 'null'}]},
        'end': _TIME,
        'before_end': {'anyOf': [_TIME, {'type': 'null'}]},
        'extra': {'type': ['object', 'null']},
    },
    'required': ['project', 'end'],
    'additionalProperties': False,
}

#: Fields PATCH may change.
UPDATABLE = frozenset({'name', 'extra', 'end'})

#: The changed fields after a PATCH is applied.
UPDATE: dict[str, Any] = {
    'type': 'object',
    'properties': {'name': node_schema.NAME, 'extra': {'type': 'object'},
                   'end': _TIME},
    'additionalProperties': False,
}

#: Values of the ``status`` list filter.
STATUSES = statuses.ALL
