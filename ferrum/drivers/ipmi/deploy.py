# SPDX-License-Identifier: Apache-2.0
"""The ``ramdisk`` deploy interface: the node boots from the network.

There is no image to write: deploying points the node at PXE for good and
power-cycles it, so whatever the boot interface serves over the network
becomes the workload (a diskless image, an installer, a rescue system).
Tearing down powers the node off and points it back at its disk. It uses
the node's power and management interfaces, so it suits any hardware type
whose management interface can set the boot device.
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
        else:
            task.driver.boot.prepare_ramdisk(task)

    def deploy(self, task: 'Task') -> str | None:
        task.driver.management.set_boot_device(task, 'pxe', persistent=True)
        task.driver.power.reboot(task)
        return None

    def tear_down(self, task: 'Task') -> None:
        task.driver.power.set_power_state(task, states.POWER_OFF)
        task.driver.management.set_boot_device(task, 'disk', persistent=True)

    def clean_up(self, task: 'Task') -> None:
        task.driver.boot.clean_up_ramdisk(task)
