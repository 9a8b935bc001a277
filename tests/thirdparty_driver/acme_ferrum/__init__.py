# SPDX-License-Identifier: Apache-2.0
"""ACME widgets: a hardware type living outside ferrum's tree.

Power comes from ACME's own interface; everything else reuses ferrum's
fake and no-op interfaces by entry-point name. See doc/drivers.md.
"""

from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers import hardware_type


class AcmeHardware(hardware_type.AbstractHardwareType):
    @property
    def supported_power_interfaces(self) -> list[str]:
        return ['acme']

    @property
    def supported_management_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_deploy_interfaces(self) -> list[str]:
        return ['fake']


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
