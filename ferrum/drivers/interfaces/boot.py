# SPDX-License-Identifier: Apache-2.0
"""The boot interface: what the node boots (ramdisk, then instance).

The rules every implementation follows are in :mod:`ferrum.drivers.base`.
"""

import abc
from typing import TYPE_CHECKING

from ferrum.drivers import interfaces

if TYPE_CHECKING:
    from ferrum.drivers.task import AnyTask


class BootInterface(interfaces.BaseInterface):
    """Prepares how the node boots: ramdisk for deploy/clean, then instance."""

    kind = 'boot'

    @abc.abstractmethod
    def prepare_ramdisk(self, task: 'AnyTask') -> None:
        """Set the node up to boot the deploy/clean ramdisk.

        Called with an exclusive lock by a deploy interface that boots a
        deploy ramdisk before the workload (the ``ramdisk`` deploy does
        not: the node boots the workload straight away). Idempotent.
        """

    def validate_ramdisk(self, task: 'AnyTask') -> None:
        """Check that the node names the deploy ramdisk this interface
        boots, without I/O.

        Called with a shared lock by a deploy interface that boots one (the
        ``direct`` deploy), in its ``validate``: before a deploy or
        cleaning is accepted, so a missing ramdisk is a 400 and never a
        node powered on for nothing. The default checks nothing.

        :raises MissingParameterValue: the field is missing (name it).
        """

    def ramdisk_boot_device(self, task: 'AnyTask') -> str | None:
        """The boot device the deploy interface sets, for the next boot
        only, after :meth:`prepare_ramdisk`; None when ``prepare_ramdisk``
        set it itself (virtual media). Must not contact the hardware. The
        default is ``'pxe'``: the network serves the deploy ramdisk.
        """
        return 'pxe'

    @abc.abstractmethod
    def clean_up_ramdisk(self, task: 'AnyTask') -> None:
        """Undo prepare_ramdisk. Exclusive lock; idempotent."""

    @abc.abstractmethod
    def prepare_instance(self, task: 'AnyTask') -> None:
        """Set the node up to boot the deployed instance.

        Called with an exclusive lock by the deploy interface when it puts
        the workload on (before it powers the node on), and at take-over
        of an ``active`` node. Idempotent. Where this interface decides
        the boot device (virtual media), it sets it here; otherwise the
        deploy interface sets :meth:`instance_boot_device`.
        """

    @abc.abstractmethod
    def clean_up_instance(self, task: 'AnyTask') -> None:
        """Undo prepare_instance. Exclusive lock; idempotent."""

    def instance_boot_device(self, task: 'AnyTask') -> str | None:
        """The boot device the deploy interface sets, persistently, after
        :meth:`prepare_instance`; None when ``prepare_instance`` has set
        the boot device itself.

        Called with an exclusive lock; must not contact the hardware. The
        default is ``'pxe'``: network boot, the node boots whatever the
        network serves it (the ``noop`` and ``fake`` boot interfaces).
        """
        return 'pxe'
