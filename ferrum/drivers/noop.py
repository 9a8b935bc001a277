# SPDX-License-Identifier: Apache-2.0
"""No-op interfaces, for hardware types that lack a capability.

They validate everything and do nothing, so a hardware type without, say,
an inspection mechanism still has a complete driver.
"""

from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.drivers import base
from ferrum.drivers import vifs

if TYPE_CHECKING:
    from ferrum.drivers.base import Task


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


#: The driver_info fields naming the deploy ramdisk a network boot serves.
RAMDISK_FIELDS = ('deploy_kernel', 'deploy_ramdisk')


def validate_network_ramdisk(task: 'Task') -> None:
    """``driver_info deploy_kernel`` and ``deploy_ramdisk`` are set: what
    the network boots for a deploy interface that boots the agent."""
    missing = [field for field in RAMDISK_FIELDS
               if not task.node.driver_info.get(field)]
    if missing:
        raise exception.MissingParameterValue(reason=(
            'driver_info %s: the "%s" deploy interface boots the '
            'deploy ramdisk (ironic-python-agent) over the network; set '
            'deploy_kernel and deploy_ramdisk to its kernel and initramfs '
            '(see doc/deploy.md).' % (' and '.join(missing),
                                      task.node.deploy_interface)))


class NoBoot(base.BootInterface):
    """Network boot that ferrum does not serve: whatever the network's
    DHCP and TFTP or HTTP servers give the node boots (the boot device is
    set to PXE)."""

    def get_properties(self) -> dict[str, str]:
        return {field: 'Required by deploy interfaces that boot the '
                       'agent (direct). The %s of the deploy ramdisk, as '
                       'the network serves it.' % field.split('_')[1]
                for field in RAMDISK_FIELDS}

    def validate(self, task: 'Task') -> None:
        pass

    def validate_ramdisk(self, task: 'Task') -> None:
        validate_network_ramdisk(task)

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


class NoFirmware(base.FirmwareInterface):
    """Ironic's ``no-firmware``: reads nothing, so the node's firmware
    list stays as it is (empty, for a node that never had another)."""

    def validate(self, task: 'Task') -> None:
        pass

    def read_components(self, task: 'Task') -> None:
        return None


class NoVendor(base.VendorInterface):
    def validate(self, task: 'Task') -> None:
        pass


class NoopNetwork(base.NetworkInterface):
    """Records VIFs and touches no network, as Ironic's ``noop``.

    Unlike Ironic's ``noop``, which forgets them, the attached VIFs are
    listed afterwards: they are recorded as a real network interface would
    find them (see :mod:`ferrum.drivers.vifs`), so tools that attach a VIF
    and read it back work, and switching the node to a real network
    interface later keeps its attachments.
    """

    def validate(self, task: 'Task') -> None:
        pass

    def vif_list(self, task: 'Task') -> list[dict[str, Any]]:
        return [{'id': vif} for vif in vifs.attached(task.ctx.db, task.node)]

    def vif_attach(self, task: 'Task', vif_info: dict[str, Any]) -> None:
        vifs.attach(task.ctx.db, task.node, vif_info)

    def vif_detach(self, task: 'Task', vif_id: str) -> None:
        vifs.detach(task.ctx.db, task.node, vif_id)
