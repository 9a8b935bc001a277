# SPDX-License-Identifier: Apache-2.0
"""How the API reaches a conductor: one interface, several transports.

The API only ever calls :class:`ConductorAPI` methods; it never touches a
node's driver itself. :class:`ConductorAPI` is the one declaration of the
conductor's RPC surface: the ``local`` transport is the conductor's
:class:`~ferrum.conductor.manager.ConductorManager` itself (the all-in-one
``ferrum``), the JSON-RPC server serves exactly :data:`METHODS`, and the
JSON-RPC client (:mod:`ferrum.rpc.client`) implements the same Protocol;
``tests/unit/rpc/test_surface.py`` fails when they drift apart.

To add a call: the method on the manager (delegating to a capability
module), its signature here, and its routing in the JSON-RPC client.

Every method raises the ferrum exceptions the manager raises; their
``code`` is the HTTP status the API answers with.
"""

from typing import Any, Protocol

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

    def inject_nmi(self, node_id: int) -> None: ...

    def get_supported_boot_devices(self, node_id: int) -> list[str]: ...

    def attach_virtual_media(self, node_id: int, device_type: str,
                             image_url: str) -> None: ...

    def detach_virtual_media(self, node_id: int,
                             device_types: list[str] | None = None
                             ) -> None: ...

    def get_virtual_media(self, node_id: int) -> list[dict[str, Any]]: ...

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

    def heartbeat(self, node_id: int, callback_url: str,
                  agent_version: str | None = None,
                  agent_token: str | None = None,
                  agent_verify_ca: str | None = None) -> None: ...

    def vendor_passthru(self, node_id: int, method: str, http_method: str,
                        info: dict[str, Any]) -> dict[str, Any]: ...

    def get_vendor_passthru_methods(self, node_id: int
                                    ) -> dict[str, dict[str, Any]]: ...


#: The names the JSON-RPC server serves: the members of ConductorAPI.
METHODS: frozenset[str] = frozenset(
    name for name in vars(ConductorAPI)
    if not name.startswith('_') and callable(vars(ConductorAPI)[name]))
