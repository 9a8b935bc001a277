# SPDX-License-Identifier: Apache-2.0
"""The conductor's Python interface: what the API and RPC call.

Every method is short and delegates to a capability module. Methods that
start work return once it is handed to a worker; the node's state shows
its progress. Errors are ferrum exceptions whose ``code`` is the HTTP
status the API answers with.
"""

import logging
from typing import Any

from ferrum.allocation import allocator
from ferrum.allocation import backfill
from ferrum.allocation import release
from ferrum.common import exception
from ferrum.conductor import agent
from ferrum.conductor import context as context_mod
from ferrum.conductor import deletion
from ferrum.conductor import driver_errors
from ferrum.conductor import power
from ferrum.conductor import provisioning
from ferrum.conductor import task_manager
from ferrum.conductor import updates
from ferrum.conductor import vendor
from ferrum.conductor import vifs
from ferrum.conductor import vmedia
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj


class ConductorManager:
    def __init__(self, ctx: context_mod.ConductorContext) -> None:
        self.ctx = ctx

    # ---- nodes --------------------------------------------------------------

    def create_node(self, values: dict[str, Any]) -> node_obj.Node:
        """Enroll a node, filling its interfaces from the driver defaults.

        :raises DriverNotSupported: the driver is not loaded here.
        :raises InterfaceNotSupported: a named interface is not usable.
        :raises NodeAlreadyExists: duplicate UUID or name.
        """
        if not values.get('driver'):
            raise exception.MissingParameterValue(
                reason='A node needs a "driver" (hardware type).')
        values = dict(values)
        values.update(self.ctx.drivers.check_node_interfaces(
            values['driver'], values))
        return node_obj.Node.create(self.ctx.db, values)

    def update_node(self, node_id: int | str, changes: dict[str, Any],
                    reset_interfaces: bool = False) -> node_obj.Node:
        """Apply validated field changes under the node's lock."""
        return updates.update_node(self.ctx, node_id, changes,
                                   reset_interfaces)

    def destroy_node(self, node_id: int | str) -> None:
        """Delete a node, its ports and its allocations (Ironic's rules).

        :raises NodeLocked: another task holds the node.
        :raises InvalidState: protected, associated, or in a state where
            deletion is refused (the message names the allowed states).
        """
        deletion.destroy_node(self.ctx, node_id)

    # ---- VIFs ---------------------------------------------------------------

    def vif_list(self, node_id: int | str) -> list[dict[str, Any]]:
        """The VIFs attached to a node, from its network interface."""
        return vifs.vif_list(self.ctx, node_id)

    def vif_attach(self, node_id: int | str,
                   vif_info: dict[str, Any]) -> None:
        """Attach a VIF (``vif_info['id']``) under the node's lock.

        :raises VifAlreadyAttached: already attached to the node.
        """
        vifs.vif_attach(self.ctx, node_id, vif_info)

    def vif_detach(self, node_id: int | str, vif_id: str) -> None:
        """Detach a VIF under the node's lock.

        :raises VifNotAttached: not attached to the node.
        """
        vifs.vif_detach(self.ctx, node_id, vif_id)

    # ---- allocations --------------------------------------------------------

    def create_allocation(self, values: dict[str, Any], traits: list[str]
                          ) -> allocation_obj.Allocation:
        """Create an allocation and start looking for a node for it.

        :raises AllocationAlreadyExists: duplicate UUID or name.
        """
        return allocator.create(self.ctx, values, traits)

    def backfill_allocation(self, node_id: int | str, values: dict[str, Any],
                            traits: list[str]) -> allocation_obj.Allocation:
        """Record an active allocation for an already active node (1.58)."""
        return backfill.backfill(self.ctx, node_id, values, traits)

    def destroy_allocation(self, ident: int | str) -> None:
        """Delete an allocation (by id, UUID or name) and release its node.

        :raises AllocationNotFound: no such allocation.
        :raises InvalidState: the node is active or busy, not in maintenance.
        :raises NodeLocked: another task kept the node's lock.
        """
        release.destroy(self.ctx, ident)

    # ---- provisioning -------------------------------------------------------

    def do_provisioning_action(self, node_id: int | str, action: str,
                               args: dict[str, Any] | None = None) -> None:
        provisioning.do_provisioning_action(self.ctx, node_id, action, args)

    # ---- drivers' asynchronous work ----------------------------------------

    def heartbeat(self, node_id: int | str, callback_url: str,
                  agent_version: str | None = None,
                  agent_token: str | None = None,
                  agent_verify_ca: str | None = None) -> None:
        """A ramdisk agent's heartbeat, for the node's deploy interface."""
        agent.heartbeat(self.ctx, node_id, callback_url, agent_version,
                        agent_token, agent_verify_ca)

    def vendor_passthru(self, node_id: int | str, method: str,
                        http_method: str,
                        info: dict[str, Any]) -> dict[str, Any]:
        """Call a vendor passthru method: ``{'async', 'return'}``."""
        return vendor.call(self.ctx, node_id, method, http_method, info)

    def get_vendor_passthru_methods(self, node_id: int | str
                                    ) -> dict[str, dict[str, Any]]:
        """The node's vendor passthru methods, as Ironic lists them."""
        return vendor.methods(self.ctx, node_id)

    # ---- power and management -----------------------------------------------

    def change_node_power_state(self, node_id: int | str, target: str,
                                timeout: int | None = None) -> None:
        power.change_power_state(self.ctx, node_id, target, timeout)

    def set_maintenance(self, node_id: int | str, enabled: bool,
                        reason: str | None = None) -> None:
        with task_manager.acquire(self.ctx, node_id, purpose='maintenance',
                                  load_driver=False) as task:
            task.node.maintenance = enabled
            task.node.maintenance_reason = reason if enabled else None
            if not enabled:
                task.node.fault = None

    def attach_virtual_media(self, node_id: int | str, device_type: str,
                             image_url: str) -> None:
        vmedia.attach(self.ctx, node_id, device_type, image_url)

    def detach_virtual_media(self, node_id: int | str,
                             device_types: list[str] | None = None) -> None:
        vmedia.detach(self.ctx, node_id, device_types)

    def get_virtual_media(self, node_id: int | str) -> list[dict[str, Any]]:
        return vmedia.listing(self.ctx, node_id)

    def validate_driver_interfaces(self, node_id: int | str
                                   ) -> dict[str, dict[str, Any]]:
        """``{kind: {'result': bool, 'reason': str | None}}`` per interface."""
        result: dict[str, dict[str, Any]] = {}
        with task_manager.acquire(self.ctx, node_id, shared=True,
                                  purpose='validation') as task:
            for kind, iface in task.driver.interfaces():
                try:
                    iface.validate(task)
                except Exception as exc:
                    driver_errors.describe(task, 'Validating the %s '
                                           'interface' % kind, exc,
                                           level=logging.DEBUG)
                    result[kind] = {'result': False, 'reason': str(exc)}
                else:
                    result[kind] = {'result': True, 'reason': None}
        return result

    def set_boot_device(self, node_id: int | str, device: str,
                        persistent: bool = False) -> None:
        with task_manager.acquire(self.ctx, node_id,
                                  purpose='setting boot device') as task:
            management = task.driver.management
            management.validate(task)
            supported = management.get_supported_boot_devices(task)
            if device not in supported:
                raise exception.InvalidParameterValue(reason=(
                    'Boot device "%s" is not supported by node %s; it '
                    'supports %s.' % (device[:100], task.node.uuid,
                                      ', '.join(supported))))
            management.set_boot_device(task, device, persistent)

    def inject_nmi(self, node_id: int | str) -> None:
        with task_manager.acquire(self.ctx, node_id,
                                  purpose='injecting an NMI') as task:
            task.driver.management.validate(task)
            task.driver.management.inject_nmi(task)

    def get_boot_device(self, node_id: int | str) -> dict[str, Any]:
        with task_manager.acquire(self.ctx, node_id, shared=True,
                                  purpose='reading boot device') as task:
            return task.driver.management.get_boot_device(task)

    def get_supported_boot_devices(self, node_id: int | str) -> list[str]:
        with task_manager.acquire(self.ctx, node_id, shared=True,
                                  purpose='listing boot devices') as task:
            return task.driver.management.get_supported_boot_devices(task)
