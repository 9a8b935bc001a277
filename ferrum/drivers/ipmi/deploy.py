# SPDX-License-Identifier: Apache-2.0
"""The ``ramdisk`` deploy interface: the node boots its workload, no image
is written.

Nothing boots before the workload: no deploy ramdisk is prepared (as with
Ironic's ``ramdisk`` deploy). Deploying asks the boot interface to prepare
the instance's boot, sets the
boot device the boot interface names for good (PXE with the ``noop`` and
``fake`` boot interfaces: whatever the network serves becomes the
workload, a diskless image, an installer, a rescue system; none with
``redfish-virtual-media``, which boots the ISO it inserted) and
power-cycles the node. Tearing down powers the node off and points it back
at its disk; cleaning up undoes the instance's boot preparation. It uses
the node's power, management and boot interfaces, so it suits any hardware
type whose management interface can set the boot device.
"""

from typing import TYPE_CHECKING

from ferrum.common import states
from ferrum.drivers import base

if TYPE_CHECKING:
    from ferrum.drivers.base import Task


class RamdiskDeploy(base.DeployInterface):

    def validate(self, task: 'Task') -> None:
        task.driver.management.validate(task)

    def prepare(self, task: 'Task') -> None:
        if task.node.provision_state == states.ACTIVE:
            # Take-over: the workload runs, it only needs its boot here.
            task.driver.boot.prepare_instance(task)
        # A deploy boots no deploy ramdisk first (as Ironic's ramdisk
        # deploy): over virtual media the BMC would download an image that
        # deploy() replaces before the node ever boots it.

    def deploy(self, task: 'Task') -> str | None:
        boot = task.driver.boot
        boot.prepare_instance(task)
        device = boot.instance_boot_device(task)
        if device is not None:
            task.driver.management.set_boot_device(task, device,
                                                   persistent=True)
        task.driver.power.reboot(task)
        return None

    def tear_down(self, task: 'Task') -> None:
        task.driver.power.set_power_state(task, states.POWER_OFF)
        task.driver.management.set_boot_device(task, 'disk', persistent=True)

    def clean_up(self, task: 'Task') -> None:
        # Idempotent: a deploy may have failed before prepare_instance.
        task.driver.boot.clean_up_instance(task)
