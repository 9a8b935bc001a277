# SPDX-License-Identifier: Apache-2.0
"""The management interface: the boot device and NMIs, out of band.

The rules every implementation follows are in :mod:`ferrum.drivers.base`.
"""

import abc
from typing import TYPE_CHECKING, Any

from ferrum.common import exception
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

    # ---- virtual media (API 1.89, 1.93): optional -------------------------

    def attach_virtual_media(self, task: 'AnyTask', device_type: str,
                             image_url: str) -> None:
        """Insert ``image_url`` into the virtual ``device_type`` (``cdrom``,
        ``floppy`` or ``disk``), replacing what it held.

        Called on a worker with an exclusive lock. Idempotent. The default
        refuses, as Ironic's interfaces without virtual media do.
        """
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='attach_virtual_media')

    def detach_virtual_media(self, task: 'AnyTask',
                             device_types: list[str] | None = None) -> None:
        """Eject the virtual ``device_types`` (every one when None).

        Called on a worker with an exclusive lock. Idempotent.
        """
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='detach_virtual_media')

    def get_virtual_media(self, task: 'AnyTask') -> list[dict[str, Any]]:
        """The virtual media devices: ``media_types``, ``inserted`` and
        ``image`` of each.

        Called with a shared lock.
        """
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='get_virtual_media')

    def inject_nmi(self, task: 'AnyTask') -> None:
        """Inject an NMI (non-maskable interrupt) into the node at once,
        as a BMC's diagnostic interrupt (``PUT
        /v1/nodes/{node}/management/inject_nmi``, API 1.29).

        Called with an exclusive lock, in any provision state, after
        :meth:`validate` passed; synchronous: it returns once the BMC
        accepted the interrupt, and changes nothing on the node. Not
        idempotent: each call is one more interrupt (the node's operating
        system usually answers with a crash dump). Optional: an
        implementation that cannot inject one keeps this default.

        :raises UnsupportedDriverExtension: this interface has no NMI
            (400, Ironic's answer).
        """
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='inject_nmi')
