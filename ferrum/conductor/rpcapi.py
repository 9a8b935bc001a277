# SPDX-License-Identifier: Apache-2.0
"""How the API reaches a conductor: one interface, several transports.

The API only ever calls :class:`ConductorAPI` methods; it never touches a
node's driver itself. The ``local`` transport (:class:`LocalConductorAPI`)
calls the conductor running in the same process, which is what the
all-in-one ``ferrum`` does. A transport over HTTP (JSON-RPC) between
``ferrum-api`` and separate conductors implements the same interface.

Every method raises the ferrum exceptions the manager raises; their
``code`` is the HTTP status the API answers with.
"""

from typing import Any, Protocol

from ferrum.conductor import manager as manager_mod
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj


class ConductorAPI(Protocol):
    """What the API may ask of a conductor."""

    def create_node(self, values: dict[str, Any]) -> node_obj.Node: ...

    def update_node(self, node_id: int, changes: dict[str, Any],
                    reset_interfaces: bool = False) -> node_obj.Node: ...

    def destroy_node(self, node_id: int) -> None: ...

    def do_provisioning_action(self, node_id: int, action: str,
                               args: dict[str, Any] | None = None) -> None: ...

    def change_node_power_state(self, node_id: int, target: str,
                                timeout: int | None = None) -> None: ...

    def set_maintenance(self, node_id: int, enabled: bool,
                        reason: str | None = None) -> None: ...

    def validate_driver_interfaces(self, node_id: int
                                   ) -> dict[str, dict[str, Any]]: ...

    def set_boot_device(self, node_id: int, device: str,
                        persistent: bool = False) -> None: ...

    def get_boot_device(self, node_id: int) -> dict[str, Any]: ...

    def get_supported_boot_devices(self, node_id: int) -> list[str]: ...

    def vif_list(self, node_id: int) -> list[dict[str, Any]]: ...

    def vif_attach(self, node_id: int, vif_info: dict[str, Any]
                   ) -> None: ...

    def vif_detach(self, node_id: int, vif_id: str) -> None: ...

    def create_allocation(self, values: dict[str, Any], traits: list[str]
                          ) -> allocation_obj.Allocation: ...

    def backfill_allocation(self, node_id: int, values: dict[str, Any],
                            traits: list[str]
                            ) -> allocation_obj.Allocation: ...

    def destroy_allocation(self, ident: int | str) -> None: ...


class LocalConductorAPI:
    """The ``local`` transport: direct calls into this process's conductor."""

    def __init__(self, manager: manager_mod.ConductorManager) -> None:
        self._manager = manager

    def create_node(self, values: dict[str, Any]) -> node_obj.Node:
        return self._manager.create_node(values)

    def update_node(self, node_id: int, changes: dict[str, Any],
                    reset_interfaces: bool = False) -> node_obj.Node:
        return self._manager.update_node(node_id, changes, reset_interfaces)

    def destroy_node(self, node_id: int) -> None:
        self._manager.destroy_node(node_id)

    def do_provisioning_action(self, node_id: int, action: str,
                               args: dict[str, Any] | None = None) -> None:
        self._manager.do_provisioning_action(node_id, action, args)

    def change_node_power_state(self, node_id: int, target: str,
                                timeout: int | None = None) -> None:
        self._manager.change_node_power_state(node_id, target, timeout)

    def set_maintenance(self, node_id: int, enabled: bool,
                        reason: str | None = None) -> None:
        self._manager.set_maintenance(node_id, enabled, reason)

    def validate_driver_interfaces(self, node_id: int
                                   ) -> dict[str, dict[str, Any]]:
        return self._manager.validate_driver_interfaces(node_id)

    def set_boot_device(self, node_id: int, device: str,
                        persistent: bool = False) -> None:
        self._manager.set_boot_device(node_id, device, persistent)

    def get_boot_device(self, node_id: int) -> dict[str, Any]:
        return self._manager.get_boot_device(node_id)

    def get_supported_boot_devices(self, node_id: int) -> list[str]:
        return self._manager.get_supported_boot_devices(node_id)

    def vif_list(self, node_id: int) -> list[dict[str, Any]]:
        return self._manager.vif_list(node_id)

    def vif_attach(self, node_id: int, vif_info: dict[str, Any]) -> None:
        self._manager.vif_attach(node_id, vif_info)

    def vif_detach(self, node_id: int, vif_id: str) -> None:
        self._manager.vif_detach(node_id, vif_id)

    def create_allocation(self, values: dict[str, Any], traits: list[str]
                          ) -> allocation_obj.Allocation:
        return self._manager.create_allocation(values, traits)

    def backfill_allocation(self, node_id: int, values: dict[str, Any],
                            traits: list[str]) -> allocation_obj.Allocation:
        return self._manager.backfill_allocation(node_id, values, traits)

    def destroy_allocation(self, ident: int | str) -> None:
        self._manager.destroy_allocation(ident)
