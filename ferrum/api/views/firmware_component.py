# SPDX-License-Identifier: Apache-2.0
"""A node's firmware components as the API shows them (1.86, 1.114)."""

import datetime
from collections.abc import Collection, Mapping
from typing import Any

from ferrum.api import microversion
from ferrum.objects import firmware_component

#: field -> the minor version that shows it.
FIELD_VERSIONS: dict[str, int] = {
    **{name: 86 for name in firmware_component.FIELDS},
    'vendor': 114, 'model': 114, 'serial_number': 114}
#: Shown at every choice of ``fields``, as Ironic's schema requires.
ALWAYS: tuple[str, ...] = ('created_at', 'updated_at')

_FIELDS = microversion.FieldVersions(FIELD_VERSIONS)


def available_fields() -> list[str]:
    """Every field the current request's version may see."""
    return _FIELDS.available()


def _value(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.isoformat() + '+00:00'
    return value


def render(component: Mapping[str, Any],
           fields: Collection[str]) -> dict[str, Any]:
    """One component as a dict of ``fields`` and :data:`ALWAYS`."""
    return {name: _value(value) for name, value in component.items()
            if name in fields or name in ALWAYS}
