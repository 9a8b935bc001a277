# SPDX-License-Identifier: Apache-2.0
"""The network interface: attaching VIFs to the node.

The rules every implementation follows are in :mod:`ferrum.drivers.base`.
"""

import abc
from typing import TYPE_CHECKING, Any

from ferrum.drivers import interfaces

if TYPE_CHECKING:
    from ferrum.drivers.task import AnyTask


class NetworkInterface(interfaces.BaseInterface):
    """Connects the node to networks: attaches and detaches VIFs.

    A VIF (virtual interface) is a port of a networking service, named by
    its ID, that the node's physical ports are to be plugged into, as
    Ironic's ``/v1/nodes/{node}/vifs`` API manages them.
    :mod:`ferrum.drivers.vifs` records VIFs where Ironic does (a port's
    ``internal_info['tenant_vif_port_id']``); an implementation that
    programs a real network calls it and then does its own work.
    """

    kind = 'network'

    @abc.abstractmethod
    def vif_list(self, task: 'AnyTask') -> list[dict[str, Any]]:
        """The VIFs attached to the node: ``[{"id": ...}, ...]``.

        Called with a shared lock (``GET /v1/nodes/{node}/vifs``). Must not
        change anything.
        """

    @abc.abstractmethod
    def vif_attach(self, task: 'AnyTask', vif_info: dict[str, Any]) -> None:
        """Attach the VIF ``vif_info['id']`` to the node.

        Called with an exclusive lock (``POST /v1/nodes/{node}/vifs``), in
        any provision state. ``vif_info`` is the request body: ``id``, and
        optionally ``port_uuid`` (the port to use).

        :raises VifAlreadyAttached: the VIF is attached to this node (409).
        :raises NoFreePhysicalPorts, InvalidParameterValue: it cannot be
            attached as asked (400).
        """

    @abc.abstractmethod
    def vif_detach(self, task: 'AnyTask', vif_id: str) -> None:
        """Detach the VIF ``vif_id`` from the node.

        Called with an exclusive lock (``DELETE
        /v1/nodes/{node}/vifs/{vif}``), in any provision state, and for
        each VIF :meth:`vif_list` gives at the node's tear-down, once the
        deploy interface tore it down: the tenant's VIFs must not reach
        the node's next tenant. A node given back without a tear-down (its
        allocation deleted, its lease ended, while it is not deployed) has
        its records forgotten by :mod:`ferrum.objects.vif` instead, without
        this call: no network was configured for them.

        :raises VifNotAttached: it is not attached to this node (400).
        """
