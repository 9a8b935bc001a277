# SPDX-License-Identifier: Apache-2.0
"""JSON Schemas of deploy template bodies, and Ironic's rules beyond them.

As in Ironic: the name is a trait (:mod:`ferrum.api.schemas.trait`); there
is at least one step; a step names an interface among those that have
deploy steps in Ironic (``bios``, ``deploy``, ``firmware``,
``management``, ``power``, ``raid``, ``vendor``), a step name, an
``args`` object and a priority of 0 or more (an integer, or a string of
digits, stored as an integer); and no two steps share an interface and a
step name. Whether the node's driver has the step is checked when a node
deploys, not here: templates are not tied to a driver.
"""

import collections
from typing import Any

from ferrum.api.schemas import trait as trait_schema
from ferrum.common import exception
from ferrum.drivers import steps

STEP: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'interface': {'type': 'string',
                      'enum': sorted(steps.DEPLOY_INTERFACE_PRIORITY)},
        'step': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'args': {'type': 'object'},
        'priority': {'anyOf': [
            {'type': 'integer', 'minimum': 0},
            {'type': 'string', 'minLength': 1, 'pattern': '^[0-9]+$'}]},
    },
    'required': ['interface', 'step', 'args', 'priority'],
    'additionalProperties': False,
}
_STEPS: dict[str, Any] = {'type': 'array', 'items': STEP, 'minItems': 1}
_WRITABLE: dict[str, Any] = {
    # Checked in code (trait_schema.check), for Ironic's explanation.
    'name': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    'steps': _STEPS,
    'extra': {'type': ['object', 'null']},
}
#: Fields a PATCH may change (Ironic's PATCH_ALLOWED_FIELDS, without
#: ``description``, which Ironic accepts but neither stores nor shows).
UPDATABLE = frozenset(_WRITABLE)

CREATE: dict[str, Any] = {
    'type': 'object',
    'properties': {**_WRITABLE, 'uuid': {'type': ['string', 'null']}},
    'required': ['name', 'steps'],
    'additionalProperties': False,
}
#: The template once a PATCH is applied: what it must still be.
UPDATE: dict[str, Any] = {
    'type': 'object',
    'properties': _WRITABLE,
    'required': ['name', 'steps'],
    'additionalProperties': False,
}


def normalize(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (schema-valid) with Ironic's other rules checked, the
    priorities as integers and a null ``extra`` as ``{}``.

    :raises InvalidParameterValue: the name is not a trait.
    :raises InvalidDeployTemplate: two steps share interface and step.
    """
    trait_schema.check(values['name'])
    counts = collections.Counter((s['interface'], s['step'])
                                 for s in values['steps'])
    duplicates = sorted(key for key, count in counts.items() if count > 1)
    if duplicates:
        raise exception.InvalidDeployTemplate(err=(
            'Duplicate deploy steps. A template cannot have multiple deploy '
            'steps with the same interface and step. Duplicates: %s'
            % '; '.join('interface: %s, step: %s' % key
                        for key in duplicates)))
    cleaned = [{'interface': s['interface'], 'step': s['step'],
              'args': s['args'], 'priority': int(s['priority'])}
             for s in values['steps']]
    result = dict(values, steps=cleaned)
    if 'extra' in result and result['extra'] is None:
        result['extra'] = {}
    return result
