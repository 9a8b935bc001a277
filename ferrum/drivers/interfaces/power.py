# SPDX-License-Identifier: Apache-2.0
"""The power interface: reading and changing a node's power state.

The rules every implementation follows are in :mod:`ferrum.drivers.base`.
"""

import abc
from typing import TYPE_CHECKING

from ferrum.common import states
from ferrum.drivers import interfaces

if TYPE_CHECKING:
    from oslo_config import cfg

    from ferrum.drivers.task import AnyTask


def change_timeout(conf: 'cfg.ConfigOpts', power_state: str,
                   timeout: int | None = None) -> int:
    """The seconds a change to ``power_state`` waits for the state:
    ``timeout`` when given, else Ironic's default for that change (a soft
    one lets the operating system shut down first)."""
    if timeout:
        return timeout
    if power_state in (states.SOFT_POWER_OFF, states.SOFT_REBOOT):
        return int(conf.conductor.soft_power_off_timeout)
    return int(conf.conductor.power_state_change_timeout)


class PowerInterface(interfaces.BaseInterface):
    """Reads and changes a node's power state."""

    kind = 'power'

    @abc.abstractmethod
    def get_power_state(self, task: 'AnyTask') -> str:
        """Ask the hardware for the current power state.

        Called with a shared lock by the power-state sync periodic and with
        an exclusive one during flows. Idempotent, no side effects.

        :returns: ``states.POWER_ON``, ``POWER_OFF`` or ``POWER_ERROR``.
        :raises DriverError: the BMC could not be reached.
        """

    @abc.abstractmethod
    def set_power_state(self, task: 'AnyTask', power_state: str,
                        timeout: int | None = None) -> None:
        """Turn the node on or off and return once it is in that state.

        Called with an exclusive lock. Must be idempotent: setting the
        current state again is a success.

        :param power_state: ``states.POWER_ON``, ``POWER_OFF`` or, when listed
            by get_supported_power_states, ``SOFT_POWER_OFF`` or
            ``SOFT_REBOOT`` (a graceful restart; a node that is off is
            turned on).
        :param timeout: seconds to wait for the state to be reached; None
            means the conductor's default for that change
            (:func:`change_timeout`): ``[conductor]soft_power_off_timeout``
            for ``SOFT_POWER_OFF`` and ``SOFT_REBOOT``,
            ``power_state_change_timeout`` for the others.
        :raises PowerStateFailure: the state was not reached in time.
        """

    @abc.abstractmethod
    def reboot(self, task: 'AnyTask', timeout: int | None = None) -> None:
        """Power-cycle the node (power it on if it was off).

        Called with an exclusive lock. Returns once the node is on.

        :param timeout: as for set_power_state (None:
            ``[conductor]power_state_change_timeout``).
        """

    def get_supported_power_states(self, task: 'AnyTask') -> list[str]:
        """The power states ``set_power_state`` and ``reboot`` accept."""
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT]
