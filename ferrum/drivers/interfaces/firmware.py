# SPDX-License-Identifier: Apache-2.0
"""The firmware interface: what firmware a node runs (API 1.86).

The rules every implementation follows are in :mod:`ferrum.drivers.base`.
"""

import abc
import dataclasses
from typing import TYPE_CHECKING

from ferrum.drivers import interfaces

if TYPE_CHECKING:
    from ferrum.drivers.task import AnyTask


@dataclasses.dataclass(frozen=True)
class Component:
    """One firmware component as the hardware reports it now.

    ``component`` is Ironic's name for it: ``bios`` for the system
    firmware, ``bmc`` for the management controller's.
    """

    component: str
    current_version: str
    vendor: str | None = None
    model: str | None = None
    serial_number: str | None = None


class FirmwareInterface(interfaces.BaseInterface):
    """Reads the versions of the node's firmware components.

    The conductor records what :meth:`read_components` returns in the
    node's firmware list (``GET /v1/nodes/{node}/firmware``) at the end
    of a verification (``manage``) and at the start of cleaning, as
    Ironic caches it. Flashing firmware is not part of the contract yet.
    """

    kind = 'firmware'

    @abc.abstractmethod
    def read_components(self, task: 'AnyTask') -> list[Component] | None:
        """The node's firmware components, as the hardware reports them.

        Called with an exclusive lock, after :meth:`validate`. Talks to
        the hardware; must not change the node.

        :returns: the components found (an empty list when the hardware
            reports none), or None when this interface reads no firmware
            at all (``no-firmware``): the conductor then leaves the
            node's list alone, and makes no database call for it.
        :raises DriverError: the hardware could not be read. The
            conductor logs a WARNING naming the node and goes on: a
            firmware list that could not be refreshed never fails a
            verification or a cleaning.
        """
