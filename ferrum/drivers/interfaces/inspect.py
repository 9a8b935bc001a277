# SPDX-License-Identifier: Apache-2.0
"""The inspect interface: discovering the node's hardware.

The rules every implementation follows are in :mod:`ferrum.drivers.base`.
"""

import abc
from typing import TYPE_CHECKING

from ferrum.drivers import interfaces

if TYPE_CHECKING:
    from ferrum.drivers.task import AnyTask


class InspectInterface(interfaces.BaseInterface):
    """Discovers the node's hardware properties."""

    kind = 'inspect'

    @abc.abstractmethod
    def inspect_hardware(self, task: 'AnyTask') -> str | None:
        """Fill ``node.properties`` from the hardware.

        Called with an exclusive lock in ``inspecting``.

        :returns: None when done, or ``states.INSPECTWAIT`` when inspection
            goes on asynchronously: the driver fills ``node.properties``
            and calls ``task.resume()`` when it is done (the node goes
            ``manageable``), or the node goes ``inspect failed`` after
            ``[conductor]inspect_wait_timeout``.
        """
