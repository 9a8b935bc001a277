# SPDX-License-Identifier: Apache-2.0
"""A node as the API shows it at a given microversion.

``FIELD_VERSIONS`` is Ironic's history of node fields: a field is shown
only to requests at or after the version that introduced it. Values that
do not live in the node row (traits, conductor, allocation and chassis
UUIDs, and the
interfaces ferrum does not serve) come from a :class:`Context` built once
per request, so rendering a page of nodes costs no query per node.
"""

import dataclasses
import functools
from collections.abc import Callable, Collection, Mapping
from typing import Any

from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import policy
from ferrum.api.views import unserved
from ferrum.common import hash_ring
from ferrum.common import states
from ferrum.conf import default as default_conf
from ferrum.objects import node as node_obj

#: field -> the minor version that introduced it.
FIELD_VERSIONS: dict[str, int] = {
    'uuid': 1, 'instance_uuid': 1, 'power_state': 1, 'provision_state': 1,
    'maintenance': 1, 'driver': 1, 'driver_info': 1, 'extra': 1,
    'instance_info': 1, 'properties': 1, 'target_power_state': 1,
    'target_provision_state': 1, 'provision_updated_at': 1, 'last_error': 1,
    'maintenance_reason': 1, 'reservation': 1, 'created_at': 1,
    'updated_at': 1, 'console_enabled': 1, 'chassis_uuid': 1, 'links': 1,
    'ports': 1, 'driver_internal_info': 3, 'name': 5,
    'inspection_started_at': 6, 'inspection_finished_at': 6,
    'clean_step': 7, 'raid_config': 12, 'target_raid_config': 12,
    'network_interface': 20, 'resource_class': 21, 'portgroups': 24,
    'boot_interface': 31, 'console_interface': 31, 'deploy_interface': 31,
    'inspect_interface': 31, 'management_interface': 31,
    'power_interface': 31, 'raid_interface': 31, 'vendor_interface': 31,
    'storage_interface': 33, 'traits': 37, 'rescue_interface': 38,
    'bios_interface': 40, 'fault': 42, 'deploy_step': 44,
    'conductor_group': 46, 'automated_clean': 47, 'protected': 48,
    'protected_reason': 48, 'conductor': 49, 'owner': 50,
    'description': 51, 'allocation_uuid': 52, 'retired': 61,
    'retired_reason': 61, 'lessee': 65, 'network_data': 66,
    'boot_mode': 75, 'secure_boot': 75, 'shard': 82, 'parent_node': 83,
    'firmware_interface': 86, 'service_step': 87, 'disable_power_off': 95,
    'instance_name': 104, 'health': 109,
}
#: The fields a list without detail shows.
LIST_FIELDS: tuple[str, ...] = ('instance_uuid', 'uuid', 'power_state',
                                'provision_state', 'maintenance', 'name',
                                'links')
#: Fields that hold no value in ferrum: the "nothing configured" value.
CONSTANTS: dict[str, Any] = {
    'console_enabled': False, 'raid_config': {},
    'network_data': {},
    'target_raid_config': {},
    # No ferrum management interface reads the boot mode (Ironic's null
    # when it is unknown).
    'boot_mode': None, 'secure_boot': None,
    # Servicing (1.87) is not served: no node ever has a service step.
    'service_step': {},
    # No ferrum management interface reads the BMC's health (Ironic's
    # null when the driver reports none).
    'health': None,
    **{'%s_interface' % kind: name
       for kind, name in unserved.INTERFACES.items()},
}
SECRET_MASK = '******'
_TIMESTAMPS = frozenset({'created_at', 'updated_at', 'provision_updated_at',
                         'inspection_started_at', 'inspection_finished_at'})


def available_fields() -> list[str]:
    """Every field the current request's version may see."""
    return list(_fields_at(microversion.request_version()[1]))


@functools.lru_cache(maxsize=None)
def _fields_at(minor: int) -> tuple[str, ...]:
    return tuple(name for name, introduced in FIELD_VERSIONS.items()
                 if introduced <= minor)


@dataclasses.dataclass
class Context:
    """What rendering needs beyond the node rows, loaded once per request."""

    #: hardware type -> kind -> interface name -> declared secret keys.
    secrets: Mapping[tuple[str, str, str], frozenset[str]]
    #: hostname -> (conductor group, hardware types), live conductors only.
    conductors: Mapping[str, tuple[str, frozenset[str]]]
    #: node id -> traits (only loaded when traits are shown).
    traits: Mapping[int, list[str]]
    #: allocation id -> allocation UUID.
    allocations: Mapping[int, str]
    #: The fields of policy.REDACTED_NODE_FIELDS the caller may not see
    #: on a node.
    hidden: Callable[[node_obj.Node], frozenset[str]] = (
        lambda _node: frozenset())
    #: chassis id -> chassis UUID (only loaded when chassis_uuid is shown).
    chassis: Mapping[int, str] = dataclasses.field(default_factory=dict)


def secret_keys(node: node_obj.Node, ctx: Context) -> frozenset[str]:
    """driver_info keys of ``node`` whose values are never shown."""
    declared: set[str] = set()
    for key in interface_keys(node):
        declared.update(ctx.secrets.get(key, ()))
    return frozenset(declared)


def interface_keys(node: node_obj.Node) -> list[tuple[str, str, str]]:
    """(hardware type, kind, interface name) of each of the node's
    interfaces: the keys of the declared secrets."""
    return [(node.driver, kind, getattr(node, '%s_interface' % kind))
            for kind in default_conf.INTERFACE_KINDS]


def mask_secrets(info: Mapping[str, Any],
                 declared: Collection[str] = ()) -> dict[str, Any]:
    """``info`` with passwords and driver-declared secrets hidden."""
    return {key: SECRET_MASK if ('password' in key.lower()
                                 or key in declared) else value
            for key, value in info.items()}


def conductor_for(node: node_obj.Node, ctx: Context) -> str | None:
    """The live conductor that handles ``node``, as the node shows it.

    The same hash ring the JSON-RPC transport routes by (see
    :mod:`ferrum.common.hash_ring`), so it only moves when membership changes.
    """
    return hash_ring.conductor_for(ctx.conductors, node.driver,
                              node.conductor_group, node.uuid)


def _value(node: node_obj.Node, name: str, ctx: Context) -> Any:
    if name in CONSTANTS:
        return CONSTANTS[name]
    if name == 'links':
        return listing.resource_links('nodes', node.uuid)
    if name == 'ports':
        return [{'href': '%sv1/nodes/%s/ports' % (listing.base_url(),
                                                   node.uuid), 'rel': 'self'}]
    if name == 'portgroups':
        return listing.resource_links('nodes', node.uuid + '/portgroups')
    if name == 'driver_info':
        return mask_secrets(node.driver_info, secret_keys(node, ctx))
    if name == 'instance_info':
        # A config drive may hold keys and passwords for the instance.
        return {key: SECRET_MASK if key == 'configdrive' else value
                for key, value in node.instance_info.items()}
    if name == 'traits':
        return ctx.traits.get(node.id, [])
    if name == 'conductor':
        return conductor_for(node, ctx)
    if name == 'provision_state':
        return _older_state_name(node.provision_state)
    if name == 'chassis_uuid':
        return (ctx.chassis.get(node.chassis_id)
                if node.chassis_id is not None else None)
    if name == 'allocation_uuid':
        return (ctx.allocations.get(node.allocation_id)
                if node.allocation_id is not None else None)
    value = getattr(node, name)
    if name in _TIMESTAMPS and value is not None:
        return value.isoformat() + '+00:00'
    return value


def _older_state_name(state: str) -> str | None:
    """A provision state as older clients know it (Ironic does the same).

    Before 1.2 "available" was called "None" (shown as null); before 1.39
    there was no "inspect wait", only "inspecting".
    """
    if state == states.AVAILABLE and not microversion.at_least(2):
        return None
    if state == states.INSPECTWAIT and not microversion.at_least(39):
        return states.INSPECTING
    return state


def render(node: node_obj.Node, fields: Collection[str],
           ctx: Context) -> dict[str, Any]:
    """``node`` as a dict of ``fields`` (already checked for the version)."""
    hidden = ctx.hidden(node)
    return {name: (_redacted(name) if name in hidden
                   else _value(node, name, ctx)) for name in fields}


def _redacted(name: str) -> Any:
    value = policy.REDACTED_NODE_FIELDS[name]
    return dict(value) if isinstance(value, dict) else value
