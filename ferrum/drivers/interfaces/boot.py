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

        Called with an exclusive lock by the deploy interface. Idempotent.
        """

    @abc.abstractmethod
    def clean_up_ramdisk(self, task: 'AnyTask') -> None:
        """Undo prepare_ramdisk. Exclusive lock; idempotent."""

    @abc.abstractmethod
    def prepare_instance(self, task: 'AnyTask') -> None:
        """Set the node up to boot the deployed instance. Exclusive lock."""

    @abc.abstractmethod
    def clean_up_instance(self, task: 'AnyTask') -> None:
        """Undo prepare_instance. Exclusive lock; idempotent."""
