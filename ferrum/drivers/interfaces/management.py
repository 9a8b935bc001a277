# SPDX-License-Identifier: Apache-2.0
"""The management interface: the boot device, out of band.

The rules every implementation follows are in :mod:`ferrum.drivers.base`.
"""

import abc
from typing import TYPE_CHECKING, Any

from ferrum.drivers import interfaces

if TYPE_CHECKING:
    from ferrum.drivers.task import AnyTask


class ManagementInterface(interfaces.BaseInterface):
    """Boot device and other out-of-band management."""

    kind = 'management'

    @abc.abstractmethod
    def get_supported_boot_devices(self, task: 'AnyTask') -> list[str]:
        """Boot devices this node can be set to (``pxe``, ``disk``, ...).

        Called with a shared lock; must not contact the hardware if it can
        be avoided.
        """

    @abc.abstractmethod
    def set_boot_device(self, task: 'AnyTask', device: str,
                        persistent: bool = False) -> None:
        """Set the boot device for the next boot (or all, if persistent).

        Called with an exclusive lock. Idempotent.
        """

    @abc.abstractmethod
    def get_boot_device(self, task: 'AnyTask') -> dict[str, Any]:
        """``{'boot_device': str | None, 'persistent': bool | None}``.

        Called with a shared lock.
        """
