# SPDX-License-Identifier: Apache-2.0
"""No-op interfaces, for hardware types that lack a capability.

They validate everything and do nothing, so a hardware type without, say,
an inspection mechanism still has a complete driver.
"""

from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.drivers import base

if TYPE_CHECKING:
    from ferrum.conductor.task_manager import Task


class NoManagement(base.ManagementInterface):
    def validate(self, task: 'Task') -> None:
        pass

    def get_supported_boot_devices(self, task: 'Task') -> list[str]:
        return []

    def set_boot_device(self, task: 'Task', device: str,
                        persistent: bool = False) -> None:
        raise exception.UnsupportedOperation(
            kind='management', node=task.node.uuid,
            operation='setting the boot device')

    def get_boot_device(self, task: 'Task') -> dict[str, Any]:
        return {'boot_device': None, 'persistent': None}


class NoBoot(base.BootInterface):
    def validate(self, task: 'Task') -> None:
        pass

    def prepare_ramdisk(self, task: 'Task') -> None:
        pass

    def clean_up_ramdisk(self, task: 'Task') -> None:
        pass

    def prepare_instance(self, task: 'Task') -> None:
        pass

    def clean_up_instance(self, task: 'Task') -> None:
        pass


class NoInspect(base.InspectInterface):
    def validate(self, task: 'Task') -> None:
        pass

    def inspect_hardware(self, task: 'Task') -> str | None:
        raise exception.UnsupportedOperation(
            kind='inspect', node=task.node.uuid, operation='inspection')


class NoVendor(base.VendorInterface):
    def validate(self, task: 'Task') -> None:
        pass
