# SPDX-License-Identifier: Apache-2.0
"""A deploy template as the API shows it (API 1.55 and later).

Every field came with 1.55. As in Ironic, ``links`` is always shown,
whatever ``fields`` asks for, and step arguments whose key looks like a
password or a secret are masked (oslo's ``mask_dict_password``).
"""

from collections.abc import Collection
from typing import Any

from oslo_utils import strutils

from ferrum.api import listing
from ferrum.objects import deploy_template as template_obj

FIELDS: tuple[str, ...] = ('uuid', 'name', 'steps', 'extra', 'created_at',
                           'updated_at', 'links')
#: The fields a list without detail shows (Ironic's DEFAULT_RETURN_FIELDS).
LIST_FIELDS: tuple[str, ...] = ('uuid', 'name')
_TIMESTAMPS = frozenset({'created_at', 'updated_at'})
MASK = '******'


def _value(template: template_obj.DeployTemplate, name: str) -> Any:
    if name == 'links':
        return listing.resource_links('deploy_templates', template.uuid)
    if name == 'steps':
        return [dict(step, args=strutils.mask_dict_password(
            step['args'], MASK)) for step in template.steps]
    value = getattr(template, name)
    if name in _TIMESTAMPS and value is not None:
        return value.isoformat() + '+00:00'
    return value


def render(template: template_obj.DeployTemplate,
           fields: Collection[str]) -> dict[str, Any]:
    """``template`` as a dict of ``fields``, and its links."""
    return {name: _value(template, name) for name in FIELDS
            if name in fields or name == 'links'}


def document(template: template_obj.DeployTemplate) -> dict[str, Any]:
    """What a PATCH applies to: the writable fields, nothing masked."""
    return {'name': template.name, 'extra': dict(template.extra),
            'steps': [dict(step) for step in template.steps]}
