# SPDX-License-Identifier: Apache-2.0
"""The power interface: reading and changing a node's power state.

The rules every implementation follows are in :mod:`ferrum.drivers.base`.
"""

import abc
from typing import TYPE_CHECKING

from ferrum.drivers import interfaces

if TYPE_CHECKING:
    from ferrum.drivers.task import AnyTask


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
            means ``[conductor]power_state_change_timeout``.
        :raises PowerStateFailure: the state was not reached in time.
        """

    @abc.abstractmethod
    def reboot(self, task: 'AnyTask', timeout: int | None = None) -> None:
        """Power-cycle the node (power it on if it was off).

        Called with an exclusive lock. Returns once the node is on.
        """

    def get_supported_power_states(self, task: 'AnyTask') -> list[str]:
        """The power states ``set_power_state`` and ``reboot`` accept."""
        from ferrum.common import states
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT]
