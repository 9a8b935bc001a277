# SPDX-License-Identifier: Apache-2.0
"""The ``direct`` deploy interface: ironic-python-agent writes the image.

Ironic's ``direct`` deploy, with its deploy steps and priorities:

====  ==========================  ==========================================
100   ``deploy``                  boot the agent (the boot interface's
                                  deploy ramdisk), wait for its heartbeat
80    ``write_image``             the agent downloads the image, writes it
                                  to the root device and checks its hash
60    ``prepare_instance_boot``   boot the instance from the disk next
40    ``tear_down_agent``         sync the disks, power off out of band
30    ``switch_to_tenant_network``  the network interface's tenant networks
20    ``boot_instance``           power on
====  ==========================  ==========================================

Cleaning boots the agent too, lists its clean steps and merges them with
the out-of-band ones by priority (see :mod:`.inband`): automated cleaning
runs ``erase_devices_metadata`` (99) and ``erase_devices`` (10), with
``[deploy]`` options as Ironic's. Whatever runs on the agent is started
as a command and followed as :mod:`.progress` says: the node moves on when
the command ends, not at the next heartbeat.

The image is described in ``instance_info`` (:mod:`.image`); the root
device hints of ``properties root_device`` reach the agent with the node.
The agent's session (URL, certificate, token: :mod:`.session`) ends with
its work: at ``tear_down_agent``, at the end of cleaning, and whenever
the deploy fails.
"""

import logging
import threading
from typing import TYPE_CHECKING, Any

from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers import steps
from ferrum.drivers.agent import client as client_mod
from ferrum.drivers.agent import configdrive
from ferrum.drivers.agent import errors
from ferrum.drivers.agent import image
from ferrum.drivers.agent import inband
from ferrum.drivers.agent import progress
from ferrum.drivers.agent import session

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)


def boot_agent(task: 'Task') -> str:
    """Power the node off, end any old session, and boot the agent.

    Off first, then the token goes, then on: an agent still running from
    before cannot look the node up in between and take the new session.
    """
    task.driver.power.set_power_state(task, states.POWER_OFF)
    session.forget(task)
    boot = task.driver.boot
    boot.prepare_ramdisk(task)
    device = boot.ramdisk_boot_device(task)
    if device is not None:
        task.driver.management.set_boot_device(task, device,
                                               persistent=False)
    task.driver.power.set_power_state(task, states.POWER_ON)
    return progress.boot_wait(task)


def power_off_agent(task: 'Task') -> None:
    """Power off out of band and end the session (the agent's work is
    over): the agent's own power-off may never come back to report."""
    task.driver.power.set_power_state(task, states.POWER_OFF)
    session.forget(task)
    progress.forget(task)


class DirectDeploy(progress.Polling, base.DeployInterface):
    """Writes whole-disk images through the agent; erases disks in
    cleaning."""

    def __init__(self) -> None:
        self._client: client_mod.AgentClient | None = None
        self._client_lock = threading.Lock()

    # ---- the client: one per conductor, for every node --------------------

    def agent(self, task: 'Task') -> client_mod.AgentClient:
        with self._client_lock:
            if self._client is None:
                self._client = client_mod.AgentClient(task.ctx.conf,
                                                      sleep=task.ctx.sleep)
            return self._client

    def shutdown(self) -> None:
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # ---- validation ---------------------------------------------------------

    def validate(self, task: 'Task') -> None:
        """The deploy ramdisk (the boot interface's) and the image, without
        I/O."""
        task.driver.boot.validate_ramdisk(task)
        image.validate(task.node.instance_info or {})

    def validate_cleaning(self, task: 'Task') -> None:
        task.driver.boot.validate_ramdisk(task)

    # ---- deploying ----------------------------------------------------------

    def prepare(self, task: 'Task') -> None:
        if task.node.provision_state == states.ACTIVE:
            # Take-over: the instance runs from its disk; only its boot.
            task.driver.boot.prepare_instance(task)

    @steps.deploy_step(priority=100)
    def deploy(self, task: 'Task') -> str | None:
        """Boot the agent; the node waits in ``wait call-back``."""
        task.node.driver_internal_info.pop(inband.CACHED_DEPLOY, None)
        return boot_agent(task)

    @steps.deploy_step(priority=80)
    def write_image(self, task: 'Task') -> str | None:
        """The agent downloads the image and writes it to the root
        device."""
        node = task.node
        info = image.image_info(node.instance_info or {}, node.uuid,
                                task.ctx.conf.deploy.stream_raw_images)
        step = {'interface': 'deploy', 'step': 'write_image',
                'priority': 80, 'reboot_requested': False,
                'args': {'image_info': info,
                         'configdrive': configdrive.for_agent(
                             node.instance_info.get('configdrive'),
                             node.uuid)}}
        params = {'step': step,
                  'node': inband.node_view(node, configdrive=True),
                  'ports': inband.ports(task.ctx.db, node.id),
                  'deploy_version': inband.versions(
                      node.driver_internal_info, inband.CACHED_DEPLOY)}
        command = self.agent(task).start(
            progress.endpoint(task), 'deploy.execute_deploy_step', params)
        return progress.wait(task, command, 'deploy step deploy.write_image')

    @steps.deploy_step(priority=60)
    def prepare_instance_boot(self, task: 'Task') -> None:
        """The next boot is the instance's, from the disk."""
        task.driver.boot.prepare_instance(task)
        task.driver.management.set_boot_device(task, 'disk', persistent=True)

    @steps.deploy_step(priority=40)
    def tear_down_agent(self, task: 'Task') -> None:
        """Flush the node's disks, then power it off out of band."""
        try:
            self.agent(task).run(progress.endpoint(task), 'standby.sync', {})
        except errors.AgentError as exc:
            # The image is written and checked; the power-off flushes too.
            LOG.warning('Node %(node)s: the agent did not sync the disks '
                        '(%(error)s); powering off all the same',
                        {'node': task.node.uuid, 'error': exc})
        power_off_agent(task)
        task.node.driver_internal_info.pop(inband.CACHED_DEPLOY, None)
        task.driver.boot.clean_up_ramdisk(task)

    @steps.deploy_step(priority=30)
    def switch_to_tenant_network(self, task: 'Task') -> None:
        """The node leaves the provisioning network for the tenant's (the
        ``noop`` network interface has none to switch)."""

    @steps.deploy_step(priority=20)
    def boot_instance(self, task: 'Task') -> None:
        """Power on: the node boots the written image."""
        task.driver.power.set_power_state(task, states.POWER_ON)

    def tear_down(self, task: 'Task') -> None:
        power_off_agent(task)
        task.node.driver_internal_info.pop(inband.CACHED_DEPLOY, None)

    def clean_up(self, task: 'Task') -> None:
        """After a tear-down or a failed deploy: nothing of the deploy
        stays (the agent powered off, its session, CD, boot files)."""
        if task.node.provision_state == states.DEPLOYFAIL:
            # As Ironic's [deploy] power_off_after_deploy_failure: the
            # agent would go on looking the node up.
            task.driver.power.set_power_state(task, states.POWER_OFF)
        session.forget(task)
        progress.forget(task)
        task.node.driver_internal_info.pop(inband.CACHED_DEPLOY, None)
        task.driver.boot.clean_up_ramdisk(task)
        task.driver.boot.clean_up_instance(task)

    def take_over(self, task: 'Task') -> None:
        # An active node runs its instance, not the agent.
        session.forget(task)

    # ---- cleaning -----------------------------------------------------------

    def prepare_cleaning(self, task: 'Task') -> str | None:
        """Boot the agent; cleaning waits in ``clean wait`` for it."""
        task.node.driver_internal_info.pop(inband.CACHED, None)
        return boot_agent(task)

    def tear_down_cleaning(self, task: 'Task') -> None:
        power_off_agent(task)
        task.node.driver_internal_info.pop(inband.CACHED, None)
        task.driver.boot.clean_up_ramdisk(task)

    def get_clean_steps(self, task: 'Task') -> list[dict[str, Any]]:
        return inband.clean_steps(task.ctx.conf,
                                  task.node.driver_internal_info)

    def execute_clean_step(self, task: 'Task',
                           step: dict[str, Any]) -> str | None:
        """Send an in-band step to the agent; the node waits in ``clean
        wait`` until it ends."""
        if not inband.is_agent_step(step):
            return super().execute_clean_step(task, step)
        node = task.node
        params = {'step': step, 'node': inband.node_view(node, task.ctx.conf),
                  'ports': inband.ports(task.ctx.db, node.id),
                  'clean_version': inband.versions(node.driver_internal_info)}
        command = self.agent(task).start(
            progress.endpoint(task), 'clean.execute_clean_step', params)
        return progress.wait(task, command,
                             'clean step deploy.%s' % step['step'])

    # ---- the agent ----------------------------------------------------------

    def heartbeat(self, task: 'Task', callback_url: str,
                  agent_version: str | None) -> None:
        """The agent is up, or has finished a command: move the node on
        (see :mod:`.progress`)."""
        progress.on_heartbeat(task, self.agent(task))
