# SPDX-License-Identifier: Apache-2.0
"""A hardware manager that shows the agent one loop device and one NIC.

IPA's generic manager lists every disk ``lsblk`` reports and skips loop
devices: on a test machine it picks the host's own root disk (``/dev/vda``)
and ``erase_devices`` would wipe it. This manager outranks the generic one
(``SERVICE_PROVIDER`` > ``GENERIC``), so every call IPA dispatches to "the
best manager" (steps, erase, write, the install device) comes here, and
the generic steps it inherits call its own ``list_block_devices``.

It is the first of the agent tests' three guards (with root device hints
and ``/dev/null`` over the host's disks). It refuses to work, raising from
``evaluate_hardware_support``, ``initialize`` and every disk listing,
unless ``IPA_TEST_DISK`` names a ``/dev/loopN`` block device: a manager
that quietly returned NONE would hand the node back to the generic manager.
``IPA_TEST_MAC`` is the MAC address the agent looks itself up by.
"""

import os
import re
import stat

# Registers IPA's options, which its hardware module reads at import.
from ironic_python_agent import config  # noqa: F401
from ironic_python_agent import errors
from ironic_python_agent import hardware

#: The environment variables the manager reads.
DISK_ENV = 'IPA_TEST_DISK'
MAC_ENV = 'IPA_TEST_MAC'
_LOOP = re.compile(r'^/dev/loop[0-9]+$')
_MAC = re.compile(r'^([0-9a-f]{2}:){5}[0-9a-f]{2}$')


class UnsafeDisk(RuntimeError):
    """IPA_TEST_DISK is not a loop device: the agent must not run."""


def loop_disk() -> str:
    """The loop device from ``IPA_TEST_DISK``, checked.

    :raises UnsafeDisk: unset, not ``/dev/loopN``, or not a block device.
    """
    disk = os.environ.get(DISK_ENV, '')
    if not _LOOP.match(disk):
        raise UnsafeDisk('%s=%r is not /dev/loopN: refusing to let the agent '
                         'near any disk' % (DISK_ENV, disk))
    try:
        mode = os.stat(disk).st_mode
    except OSError as exc:
        raise UnsafeDisk('%s=%s: %s' % (DISK_ENV, disk, exc)) from exc
    if not stat.S_ISBLK(mode):
        raise UnsafeDisk('%s=%s is not a block device' % (DISK_ENV, disk))
    return disk


def node_mac() -> str:
    """The MAC address from ``IPA_TEST_MAC``, lower case.

    :raises UnsafeDisk: unset or malformed (the agent could not look
        itself up, and must not start half-configured).
    """
    mac = os.environ.get(MAC_ENV, '').lower()
    if not _MAC.match(mac):
        raise UnsafeDisk('%s=%r is not a MAC address' % (MAC_ENV, mac))
    return mac


def _sectors(name: str) -> int:
    with open('/sys/class/block/%s/size' % name) as size:
        return int(size.read().strip())


def _block_device(path: str) -> hardware.BlockDevice:
    name = os.path.basename(path)
    return hardware.BlockDevice(name=path, model='loopdisk',
                                size=_sectors(name) * 512, rotational=False,
                                serial='loopdisk-%s' % name,
                                logical_sectors=512, physical_sectors=512)


class LoopDiskHardwareManager(hardware.GenericHardwareManager):
    """The generic manager, narrowed to ``IPA_TEST_DISK`` and
    ``IPA_TEST_MAC``."""

    HARDWARE_MANAGER_NAME = 'LoopDiskHardwareManager'
    HARDWARE_MANAGER_VERSION = '1'

    def evaluate_hardware_support(self) -> int:
        loop_disk()
        node_mac()
        return hardware.HardwareSupport.SERVICE_PROVIDER

    def initialize(self) -> None:
        # Nothing of the generic start-up (iscsistart, mdadm, modprobe,
        # multipathd, waiting for a root disk): only the checks.
        loop_disk()
        node_mac()

    def list_block_devices(self, include_partitions: bool = False,
                           all_serial_and_wwn: bool = False
                           ) -> list[hardware.BlockDevice]:
        disk = loop_disk()
        devices = [_block_device(disk)]
        if include_partitions:
            name = os.path.basename(disk)
            parts = sorted(p for p in os.listdir('/sys/class/block/%s' % name)
                           if re.match(r'^%sp[0-9]+$' % name, p))
            devices.extend(_block_device('/dev/%s' % p) for p in parts
                           if stat.S_ISBLK(os.stat('/dev/%s' % p).st_mode))
        return devices

    def get_os_install_device(self, permit_refresh: bool = False) -> str:
        # The generic choice applies the node's root device hints to the
        # list above; anything but the loop device is refused outright.
        device: str = super().get_os_install_device(permit_refresh)
        disk = loop_disk()
        if device != disk:
            raise errors.DeviceNotFound('refusing install device %s: only %s '
                                        'is allowed' % (device, disk))
        return device

    def list_network_interfaces(self) -> list[hardware.NetworkInterface]:
        return [hardware.NetworkInterface('eth0', node_mac(),
                                          ipv4_address='127.0.0.1',
                                          has_carrier=True)]

    def get_interface_info(self, interface_name: str
                           ) -> hardware.NetworkInterface:
        return hardware.NetworkInterface(interface_name, node_mac(),
                                         ipv4_address='127.0.0.1')

    def collect_lldp_data(self, interface_names: list[str] | None = None
                          ) -> dict[str, list[object]]:
        return {}

    def get_bmc_address(self) -> str:
        return '0.0.0.0'

    def get_bmc_v6address(self) -> str:
        return '::/0'

    def get_bmc_mac(self) -> str:
        raise errors.IncompatibleHardwareMethodError()

    def get_skip_list_from_node_for_raids(self, node: dict[str, object]
                                          ) -> None:
        # No software RAID on a loop device; the generic answer would list
        # the host's md devices.
        return None


def self_check() -> dict[str, object]:
    """What the agent will see, for the sandbox's start-up check.

    Loads the managers through the entry points exactly as IPA does (not
    their ``initialize``) and reports each one's support level and this
    manager's disks. Raises when this manager would not be the agent's
    first choice or lists anything but the loop device.
    """
    import stevedore

    extensions = stevedore.ExtensionManager(
        namespace='ironic_python_agent.hardware_managers',
        invoke_on_load=True)
    # As in IPA, a manager whose evaluation raises stops the agent.
    support = {extension.name: int(extension.obj.evaluate_hardware_support())
               for extension in extensions}
    if 'loopdisk' not in support:
        raise UnsafeDisk('the loopdisk hardware manager is not installed '
                         'in this environment')
    best = max(support.values())
    if support['loopdisk'] != best or list(support.values()).count(best) > 1:
        raise UnsafeDisk('loopdisk is not the only top manager: %s' % support)
    disks = [d.name for d in LoopDiskHardwareManager().list_block_devices()]
    if disks != [loop_disk()]:
        raise UnsafeDisk('loopdisk lists %s' % disks)
    return {'support': support, 'disks': disks, 'mac': node_mac()}
