# SPDX-License-Identifier: Apache-2.0
"""Trait names follow Ironic's rules: a standard trait from os-traits, or
``CUSTOM_`` followed by capitals, digits and underscores; at most 255
characters, and at most 50 traits on a node."""

import re
from typing import Any

import os_traits

from ferrum.common import exception

MAX_TRAITS_PER_NODE = 50
_CUSTOM = re.compile('^%s[A-Z0-9_]+$' % os_traits.CUSTOM_NAMESPACE)
_STANDARD = frozenset(os_traits.get_traits())

#: Body of PUT /v1/nodes/{node}/traits.
SET_TRAITS: dict[str, Any] = {
    'type': 'object',
    'properties': {'traits': {'type': 'array', 'items': {'type': 'string'},
                              'maxItems': MAX_TRAITS_PER_NODE}},
    'required': ['traits'],
    'additionalProperties': False,
}


def check(trait: str) -> None:
    """Raise a 400 that explains the rules when ``trait`` breaks them."""
    if len(trait) <= 255 and (trait in _STANDARD or _CUSTOM.match(trait)):
        return
    raise exception.InvalidParameterValue(
        reason='Invalid trait "%s". A valid trait is at most 255 characters: '
               'a standard trait from the os-traits library, or a custom '
               'trait starting with CUSTOM_ and using only A-Z, 0-9 and _.'
               % trait[:300])


def check_count(count: int) -> None:
    if count > MAX_TRAITS_PER_NODE:
        raise exception.InvalidParameterValue(
            reason='A node can have at most %d traits; this request would '
                   'give it %d.' % (MAX_TRAITS_PER_NODE, count))
