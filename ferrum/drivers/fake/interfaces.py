# SPDX-License-Identifier: Apache-2.0
"""Fake interfaces. Behaviour is steered per node through ``driver_info``:

* ``fake_fail``: list of hook names that raise ``DriverError``
  (``validate``, ``power``, ``prepare``, ``deploy``, ``tear_down``,
  ``clean_up``, ``prepare_cleaning``, ``tear_down_cleaning``,
  ``erase_devices``, ``take_over``, ``inspect``, ``firmware``);
* ``fake_async``: list of hooks that finish asynchronously and return a wait
  state (``deploy``, ``prepare_cleaning``, ``erase_devices``, ``inspect``);
* ``fake_deploy_seconds``: how long ``deploy`` takes, like slow hardware
  (used to stop a conductor in the middle of a deploy);
* ``fake_firmware``: component name -> version, what the fake firmware
  interface reports (none when unset, as Ironic's fake firmware);
* ``fake_secret``: read by nothing; fake power declares it secret, so the
  API's masking of driver-declared secrets can be seen and tested.

The fake deploy's ``take_over`` records the conductor that called it in
``driver_internal_info['fake_taken_over_by']``. Its deploy step
``record_deploy_message`` (priority 0: it runs only when a deploy template
turns it on) records its ``message`` argument in
``driver_internal_info['fake_deploy_message']``. Its ``heartbeat`` acts as
an agent that finishes at once: it records the agent's URL and ends any
wait. The fake vendor interface's ``finish_wait`` passthru method ends a
wait too, and ``status`` (GET) reads the node.

This lets tests and demos walk every failure path of the state machine
with the real conductor and no mocks.
"""

from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers import noop
from ferrum.drivers import steps

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

#: The driver_internal_info key ``take_over`` writes the conductor into.
TAKEN_OVER_BY = 'fake_taken_over_by'
#: The driver_internal_info key the deploy step ``record_deploy_message``
#: writes its argument into.
DEPLOY_MESSAGE = 'fake_deploy_message'


def _maybe_fail(task: 'Task', hook: str) -> None:
    if hook in (task.node.driver_info.get('fake_fail') or ()):
        raise exception.DriverError(
            reason='fake %s failure requested by driver_info fake_fail on '
                   'node %s' % (hook, task.node.uuid))


def _is_async(task: 'Task', hook: str) -> bool:
    return hook in (task.node.driver_info.get('fake_async') or ())


def _record_power(task: 'Task', action: str) -> None:
    # What the conductor asked for, for tests: a soft reboot must arrive
    # as one, not as a hard reboot.
    task.node.driver_internal_info = dict(task.node.driver_internal_info,
                                          fake_power_action=action)


class FakePower(base.PowerInterface):
    secret_properties = frozenset({'fake_secret'})

    def get_properties(self) -> dict[str, str]:
        return {'fake_fail': 'Optional. Hooks that should fail.',
                'fake_async': 'Optional. Hooks that finish asynchronously.',
                'fake_secret': 'Optional. A secret the API never shows.'}

    def validate(self, task: 'Task') -> None:
        _maybe_fail(task, 'validate')

    def get_power_state(self, task: 'Task') -> str:
        _maybe_fail(task, 'power')
        return task.node.power_state or states.POWER_OFF

    def set_power_state(self, task: 'Task', power_state: str,
                        timeout: int | None = None) -> None:
        _maybe_fail(task, 'power')
        if power_state not in (states.POWER_ON, states.POWER_OFF,
                               states.SOFT_POWER_OFF, states.SOFT_REBOOT):
            raise exception.InvalidParameterValue(
                reason='fake power cannot set %s' % power_state)
        _record_power(task, power_state)

    def reboot(self, task: 'Task', timeout: int | None = None) -> None:
        _maybe_fail(task, 'power')
        _record_power(task, states.REBOOT)

    def get_supported_power_states(self, task: 'Task') -> list[str]:
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT,
                states.SOFT_POWER_OFF, states.SOFT_REBOOT]


class FakeManagement(base.ManagementInterface):
    def validate(self, task: 'Task') -> None:
        pass

    def get_supported_boot_devices(self, task: 'Task') -> list[str]:
        return ['pxe', 'disk', 'cdrom', 'bios']

    def set_boot_device(self, task: 'Task', device: str,
                        persistent: bool = False) -> None:
        if device not in self.get_supported_boot_devices(task):
            raise exception.InvalidParameterValue(
                reason='Boot device %s is not one of %s' % (
                    device, self.get_supported_boot_devices(task)))
        task.node.driver_internal_info['fake_boot_device'] = {
            'boot_device': device, 'persistent': persistent}

    def get_boot_device(self, task: 'Task') -> dict[str, Any]:
        return dict(task.node.driver_internal_info.get(
            'fake_boot_device', {'boot_device': 'disk', 'persistent': True}))

    def inject_nmi(self, task: 'Task') -> None:
        """Accepted, and nothing happens (as Ironic's fake)."""


class FakeBoot(base.BootInterface):
    def validate(self, task: 'Task') -> None:
        pass

    def validate_ramdisk(self, task: 'Task') -> None:
        # As network boot: a direct deploy over fake boot names its ramdisk.
        noop.validate_network_ramdisk(task)

    def prepare_ramdisk(self, task: 'Task') -> None:
        pass

    def clean_up_ramdisk(self, task: 'Task') -> None:
        pass

    def prepare_instance(self, task: 'Task') -> None:
        pass

    def clean_up_instance(self, task: 'Task') -> None:
        pass


class FakeDeploy(base.DeployInterface):
    def validate(self, task: 'Task') -> None:
        pass

    def prepare(self, task: 'Task') -> None:
        _maybe_fail(task, 'prepare')

    def deploy(self, task: 'Task') -> str | None:
        _maybe_fail(task, 'deploy')
        task.ctx.sleep(float(task.node.driver_info.get('fake_deploy_seconds',
                                                      0)))
        return states.DEPLOYWAIT if _is_async(task, 'deploy') else None

    def tear_down(self, task: 'Task') -> None:
        _maybe_fail(task, 'tear_down')

    def clean_up(self, task: 'Task') -> None:
        _maybe_fail(task, 'clean_up')

    def take_over(self, task: 'Task') -> None:
        _maybe_fail(task, 'take_over')
        # Shown in driver_internal_info, so a test (or a demo) can see
        # through the API which conductor last took the node over.
        info = dict(task.node.driver_internal_info)
        info[TAKEN_OVER_BY] = task.ctx.host
        task.node.driver_internal_info = info

    def prepare_cleaning(self, task: 'Task') -> str | None:
        _maybe_fail(task, 'prepare_cleaning')
        if _is_async(task, 'prepare_cleaning'):
            return states.CLEANWAIT
        return None

    def tear_down_cleaning(self, task: 'Task') -> None:
        _maybe_fail(task, 'tear_down_cleaning')

    def heartbeat(self, task: 'Task', callback_url: str,
                  agent_version: str | None) -> None:
        """An agent that is done as soon as it calls: end any wait."""
        task.upgrade_lock()
        task.node.driver_internal_info = dict(
            task.node.driver_internal_info, fake_agent_url=callback_url)
        if task.node.provision_state in states.WAIT_STATES:
            task.resume()

    @steps.deploy_step(priority=0, argsinfo={
        'message': {'description': 'Text recorded on the node.',
                    'required': True}})
    def record_deploy_message(self, task: 'Task', message: str) -> None:
        """A deploy step that runs only when a deploy template asks for it;
        it records its argument (see the module's documentation)."""
        task.node.driver_internal_info = dict(
            task.node.driver_internal_info, **{DEPLOY_MESSAGE: message})

    @steps.clean_step(priority=10, abortable=True)
    def erase_devices(self, task: 'Task') -> str | None:
        """Pretend to erase the disks (automated cleaning)."""
        _maybe_fail(task, 'erase_devices')
        if _is_async(task, 'erase_devices'):
            return states.CLEANWAIT
        return None

    @steps.clean_step(priority=0, argsinfo={
        'message': {'description': 'Text recorded on the node.',
                    'required': True}})
    def record_message(self, task: 'Task', message: str) -> None:
        """A manual-only step that records its argument."""
        task.node.driver_internal_info['fake_message'] = message


class FakeInspect(base.InspectInterface):
    def validate(self, task: 'Task') -> None:
        pass

    def inspect_hardware(self, task: 'Task') -> str | None:
        _maybe_fail(task, 'inspect')
        if _is_async(task, 'inspect'):
            return states.INSPECTWAIT
        task.node.properties.update({'cpus': 8, 'memory_mb': 16384,
                                     'local_gb': 100, 'cpu_arch': 'x86_64'})
        return None


class FakeVendor(base.VendorInterface):
    def validate(self, task: 'Task') -> None:
        _maybe_fail(task, 'validate')

    @base.passthru(['POST'], async_call=False,
                   description='End the node\'s wait, as a driver does once '
                               'its asynchronous work is done.')
    def finish_wait(self, task: 'Task') -> dict[str, Any]:
        task.resume()
        return {'resumed': task.node.provision_state}

    @base.passthru(['GET'], async_call=False, require_exclusive_lock=False,
                   description='Read the node\'s provision state.')
    def status(self, task: 'Task') -> dict[str, Any]:
        return {'provision_state': task.node.provision_state}

    @base.passthru(['POST'], description='Record a message, on a worker.')
    def record(self, task: 'Task', message: str) -> None:
        _maybe_fail(task, 'vendor')
        task.node.driver_internal_info = dict(
            task.node.driver_internal_info, fake_vendor_message=message)


class FakeFirmware(base.FirmwareInterface):
    """Reports driver_info ``fake_firmware`` as the node's components."""

    def validate(self, task: 'Task') -> None:
        pass

    def read_components(self, task: 'Task') -> list[base.FirmwareComponent]:
        _maybe_fail(task, 'firmware')
        versions = task.node.driver_info.get('fake_firmware') or {}
        return [base.FirmwareComponent(component=str(name),
                                       current_version=str(version))
                for name, version in sorted(dict(versions).items())]
