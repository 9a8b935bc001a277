# SPDX-License-Identifier: Apache-2.0
"""ACME widgets: a hardware type living outside ferrum's tree.

Power comes from ACME's own interface, and an asynchronous deploy from
ACME's own: ``deploy`` starts writing the image and returns
``DEPLOYWAIT``; a periodic task finds the nodes whose image is written and
ends their wait with ``task.resume()``. Everything else reuses ferrum's
fake and no-op interfaces by entry-point name. See doc/drivers.md, and
the package's tests, which use ferrum's driver test kit.
"""

from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers import hardware_type
from ferrum.periodic import decorators


class AcmeHardware(hardware_type.AbstractHardwareType):
    @property
    def supported_power_interfaces(self) -> list[str]:
        return ['acme']

    @property
    def supported_management_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_deploy_interfaces(self) -> list[str]:
        return ['fake', 'acme']


class AcmePower(base.PowerInterface):
    """Keeps the power state in driver_internal_info, like a toy BMC."""

    def get_properties(self) -> dict[str, str]:
        return {'acme_address': 'Required. Address of the ACME controller.'}

    def validate(self, task) -> None:
        if not task.node.driver_info.get('acme_address'):
            raise exception.MissingParameterValue(
                reason='driver_info is missing acme_address; set it to the '
                       'address of the ACME controller.')

    def get_power_state(self, task) -> str:
        return task.node.driver_internal_info.get('acme_power',
                                                  states.POWER_OFF)

    def set_power_state(self, task, power_state, timeout=None) -> None:
        task.node.driver_internal_info['acme_power'] = power_state

    def reboot(self, task, timeout=None) -> None:
        task.node.driver_internal_info['acme_power'] = states.POWER_ON


class AcmeDeploy(base.DeployInterface):
    """Writes the image in the background; a periodic task notices the end.

    The toy "controller" is ``driver_internal_info['acme_progress']``: the
    percentage written, which a real driver would read from the hardware.
    """

    def validate(self, task) -> None:
        pass

    def prepare(self, task) -> None:
        pass

    def deploy(self, task):
        task.node.driver_internal_info['acme_progress'] = 0
        return states.DEPLOYWAIT  # the periodic task below ends the wait

    def tear_down(self, task) -> None:
        task.node.driver_internal_info.pop('acme_progress', None)

    def clean_up(self, task) -> None:
        task.node.driver_internal_info.pop('acme_progress', None)

    @decorators.node_periodic(
        purpose='checking ACME image writes',
        spacing=lambda conf: 10,
        filters={'provision_state': states.DEPLOYWAIT})
    def check_writes(self, task) -> None:
        if task.node.deploy_interface != 'acme':
            return
        if task.node.driver_internal_info.get('acme_progress', 0) < 100:
            return  # still writing: look again next time
        task.upgrade_lock()  # reads the node again
        if task.node.provision_state == states.DEPLOYWAIT:
            task.resume()  # the node goes on to active
