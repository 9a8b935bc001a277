# SPDX-License-Identifier: Apache-2.0
"""The ``redfish`` firmware interface: BIOS and BMC versions, out of band.

One pass over the node's System (one :func:`client.call`) reads what
Ironic's ``redfish`` firmware interface reads:

* ``bios``: the System's ``BiosVersion``;
* ``bmc``: the ``FirmwareVersion`` of the first Manager that manages the
  System (``Links/ManagedBy``), with the Manager's ``Model`` as the
  component's ``model``.

A part the BMC does not report (no ``BiosVersion``, no Manager, a Manager
without ``FirmwareVersion``) is left out of the list, with a DEBUG line;
the NIC firmware Ironic also reads from ``NetworkAdapters`` is not read.
A BMC that reports neither fails the read (the conductor logs it and goes
on), as Ironic's does.
"""

import logging
from typing import TYPE_CHECKING, Any

from ferrum.drivers import base
from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors
from ferrum.drivers.redfish import power

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)


def _bmc(system: Any) -> base.FirmwareComponent | None:
    managers, why = client.optional(lambda: system.managers)
    if not managers:
        LOG.debug('System %s links no Manager: %s', system.identity,
                  why or 'ManagedBy is empty')
        return None
    manager = managers[0]
    if not manager.firmware_version:
        LOG.debug('Manager %s gives no FirmwareVersion', manager.identity)
        return None
    return base.FirmwareComponent(component='bmc',
                                  current_version=manager.firmware_version,
                                  model=manager.model)


def read_firmware(system: Any) -> list[base.FirmwareComponent]:
    """The components of one reading of the node's sushy System."""
    found = []
    if system.bios_version:
        found.append(base.FirmwareComponent(
            component='bios', current_version=system.bios_version))
    else:
        LOG.debug('System %s gives no BiosVersion', system.identity)
    bmc = _bmc(system)
    if bmc is not None:
        found.append(bmc)
    return found


class RedfishFirmware(client.ClosesSessions, base.FirmwareInterface):
    """The BIOS and BMC firmware versions of the node's Redfish System."""

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        power.params(task)

    def read_components(self, task: 'Task') -> list[base.FirmwareComponent]:
        """The ``bios`` and ``bmc`` components; see the module's docstring.

        :raises RedfishError: the BMC failed, or reports neither version.
        """
        bmc = power.params(task)
        found = client.call(task.ctx.conf, bmc,
                            'reading the firmware versions', read_firmware)
        if not found:
            raise errors.RedfishError(
                action='reading the firmware versions', address=bmc.address,
                reason='the System gives no BiosVersion and no Manager of '
                       'it gives a FirmwareVersion')
        return found
