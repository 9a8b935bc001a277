# SPDX-License-Identifier: Apache-2.0
"""The route table: URL → {HTTP method: handler}. The only place routes live.

Handlers return a dict (rendered as JSON with status 200) or a Flask
response. Path parameters use no converters, so that a handler, not the
router, decides what a malformed identifier means.
"""

from collections.abc import Callable
from typing import Any

from ferrum.api.handlers import agent
from ferrum.api.handlers import allocation
from ferrum.api.handlers import chassis
from ferrum.api.handlers import conductor
from ferrum.api.handlers import deploy_template
from ferrum.api.handlers import driver
from ferrum.api.handlers import event
from ferrum.api.handlers import lease
from ferrum.api.handlers import metrics
from ferrum.api.handlers import node
from ferrum.api.handlers import node_children
from ferrum.api.handlers import node_firmware
from ferrum.api.handlers import node_history
from ferrum.api.handlers import node_management
from ferrum.api.handlers import node_states
from ferrum.api.handlers import node_vmedia
from ferrum.api.handlers import placement
from ferrum.api.handlers import port
from ferrum.api.handlers import portgroup
from ferrum.api.handlers import root
from ferrum.api.handlers import shard
from ferrum.api.handlers import trait
from ferrum.api.handlers import unserved
from ferrum.api.handlers import vendor
from ferrum.api.handlers import vif
from ferrum.api.handlers import volume

Handler = Callable[..., Any]

_NODE = '/v1/nodes/<node_ident>'
_CHASSIS = '/v1/chassis/<chassis_uuid>'

ROUTES: dict[str, dict[str, Handler]] = {
    '/': {'GET': root.root},
    '/v1': {'GET': root.v1},
    # ---- nodes ----
    '/v1/nodes': {'GET': node.list_nodes, 'POST': node.create_node},
    '/v1/nodes/detail': {'GET': node.list_details},
    _NODE: {'GET': node.get_node, 'PATCH': node.patch_node,
            'DELETE': node.delete_node},
    _NODE + '/states': {'GET': node_states.get_states},
    _NODE + '/states/provision': {'PUT': node_states.set_provision_state},
    _NODE + '/states/power': {'PUT': node_states.set_power_state},
    _NODE + '/maintenance': {'PUT': node_states.set_maintenance,
                             'DELETE': node_states.unset_maintenance},
    _NODE + '/validate': {'GET': node_management.validate},
    _NODE + '/management/boot_device': {
        'GET': node_management.get_boot_device,
        'PUT': node_management.set_boot_device},
    _NODE + '/management/boot_device/supported': {
        'GET': node_management.get_supported_boot_devices},
    _NODE + '/management/inject_nmi': {'PUT': node_management.inject_nmi},
    _NODE + '/allocation': {'GET': allocation.get_node_allocation,
                            'DELETE': allocation.delete_node_allocation},
    _NODE + '/vifs': {'GET': vif.list_vifs, 'POST': vif.attach_vif},
    _NODE + '/vifs/<vif_id>': {'DELETE': vif.detach_vif},
    _NODE + '/vendor_passthru': {method: vendor.call for method in (
        'GET', 'POST', 'PUT', 'PATCH', 'DELETE')},
    _NODE + '/vendor_passthru/methods': {'GET': vendor.list_methods},
    _NODE + '/traits': {'GET': trait.list_traits, 'PUT': trait.set_traits,
                        'DELETE': trait.remove_all_traits},
    _NODE + '/traits/<trait_name>': {'PUT': trait.add_trait,
                                     'DELETE': trait.remove_trait},
    _NODE + '/history': {'GET': node_history.list_history},
    _NODE + '/history/<event_ident>': {
        'GET': node_history.get_history_entry},
    _NODE + '/children': {'GET': node_children.list_children},
    _NODE + '/firmware': {'GET': node_firmware.list_firmware},
    _NODE + '/vmedia': {'GET': node_vmedia.get, 'POST': node_vmedia.attach,
                        'DELETE': node_vmedia.detach},
    '/v1/shards': {'GET': shard.list_shards},
    _NODE + '/inventory': {'GET': unserved.get_inventory},
    # ---- ports (and a node's ports) ----
    '/v1/ports': {'GET': port.list_ports, 'POST': port.create_port},
    '/v1/ports/detail': {'GET': port.list_details},
    '/v1/ports/<port_ident>': {'GET': port.get_port, 'PATCH': port.patch_port,
                               'DELETE': port.delete_port},
    _NODE + '/ports': {'GET': port.list_node_ports},
    _NODE + '/ports/detail': {'GET': port.list_node_port_details},
    # ---- port groups (and a node's, and a group's ports) ----
    '/v1/portgroups': {'GET': portgroup.list_portgroups,
                       'POST': portgroup.create_portgroup},
    '/v1/portgroups/detail': {'GET': portgroup.list_details},
    '/v1/portgroups/<portgroup_ident>': {
        'GET': portgroup.get_portgroup, 'PATCH': portgroup.patch_portgroup,
        'DELETE': portgroup.delete_portgroup},
    '/v1/portgroups/<portgroup_ident>/ports': {'GET': portgroup.list_ports},
    '/v1/portgroups/<portgroup_ident>/ports/detail': {
        'GET': portgroup.list_port_details},
    _NODE + '/portgroups': {'GET': portgroup.list_node_portgroups},
    _NODE + '/portgroups/detail': {
        'GET': portgroup.list_node_portgroup_details},
    # ---- chassis (and a chassis' nodes) ----
    '/v1/chassis': {'GET': chassis.list_chassis,
                    'POST': chassis.create_chassis},
    '/v1/chassis/detail': {'GET': chassis.list_details},
    _CHASSIS: {'GET': chassis.get_chassis, 'PATCH': chassis.patch_chassis,
               'DELETE': chassis.delete_chassis},
    _CHASSIS + '/nodes': {'GET': node.list_chassis_nodes},
    _CHASSIS + '/nodes/detail': {'GET': node.list_chassis_node_details},
    # ---- volume connectors and targets (and a node's) ----
    '/v1/volume': {'GET': volume.get_volume},
    '/v1/volume/connectors': {'GET': volume.list_connectors,
                              'POST': volume.create_connector},
    '/v1/volume/connectors/<connector_uuid>': {
        'GET': volume.get_connector, 'PATCH': volume.patch_connector,
        'DELETE': volume.delete_connector},
    '/v1/volume/targets': {'GET': volume.list_targets,
                           'POST': volume.create_target},
    '/v1/volume/targets/<target_uuid>': {
        'GET': volume.get_target, 'PATCH': volume.patch_target,
        'DELETE': volume.delete_target},
    _NODE + '/volume': {'GET': volume.get_node_volume},
    _NODE + '/volume/connectors': {'GET': volume.list_node_connectors},
    _NODE + '/volume/targets': {'GET': volume.list_node_targets},
    # ---- allocations ----
    '/v1/allocations': {'GET': allocation.list_allocations,
                        'POST': allocation.create_allocation},
    '/v1/allocations/<allocation_ident>': {
        'GET': allocation.get_allocation,
        'PATCH': allocation.patch_allocation,
        'DELETE': allocation.delete_allocation},
    # ---- deploy templates (1.55) ----
    '/v1/deploy_templates': {'GET': deploy_template.list_templates,
                             'POST': deploy_template.create_template},
    '/v1/deploy_templates/<template_ident>': {
        'GET': deploy_template.get_template,
        'PATCH': deploy_template.patch_template,
        'DELETE': deploy_template.delete_template},
    # ---- ramdisk agents (public) ----
    '/v1/lookup': {'GET': agent.lookup},
    '/v1/heartbeat/<node_ident>': {'POST': agent.heartbeat},
    '/v1/continue_inspection': {'POST': unserved.continue_inspection},
    # ---- leases (ferrum's extension, no microversion) ----
    '/v1/leases': {'GET': lease.list_leases, 'POST': lease.create_lease},
    '/v1/leases/<lease_ident>': {'GET': lease.get_lease,
                                 'PATCH': lease.patch_lease,
                                 'DELETE': lease.delete_lease},
    _NODE + '/leases': {'GET': lease.node_calendar},
    # ---- drivers and conductors ----
    '/v1/drivers': {'GET': driver.list_drivers},
    '/v1/drivers/<driver_name>': {'GET': driver.get_driver},
    '/v1/drivers/<driver_name>/properties': {
        'GET': driver.get_driver_properties},
    '/v1/conductors': {'GET': conductor.list_conductors},
    '/v1/conductors/<hostname>': {'GET': conductor.get_conductor},
    # ---- ferrum's extension: the event feed (no microversion) ----
    '/v1/events': {'GET': event.list_events},
    # ---- ferrum's extension: the Placement sync state ----
    '/v1/placement/status': {'GET': placement.get_status},
    # ---- Prometheus metrics (doc/observability.md) ----
    '/metrics': {'GET': metrics.get_metrics},
}
