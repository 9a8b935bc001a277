# SPDX-License-Identifier: Apache-2.0
"""The ``oneview`` hardware type: HPE OneView servers, dynamically allocated.

Enable it with ``enabled_hardware_types = oneview``, ``enabled_power_interfaces
= oneview``, ``enabled_management_interfaces = oneview`` and
``enabled_deploy_interfaces = oneview``, and the ``[oneview]`` options. It
needs the hpOneView library (``pip install "ferrum[oneview]"``): without it
the conductor refuses to start and names the missing library. See
doc/oneview.md; the node fields are in
:mod:`ferrum.drivers.oneview.driver_info`.
"""

import importlib

from ferrum.drivers import hardware_type


class OneViewHardware(hardware_type.AbstractHardwareType):
    """Server hardware managed by a OneView appliance."""

    def __init__(self) -> None:
        # Loaded once per conductor: without hpOneView the start-up stops
        # here, naming the library, instead of every node failing later.
        importlib.import_module('ferrum.drivers.oneview.client')

    @property
    def supported_power_interfaces(self) -> list[str]:
        return ['oneview']

    @property
    def supported_management_interfaces(self) -> list[str]:
        return ['oneview']

    @property
    def supported_deploy_interfaces(self) -> list[str]:
        return ['oneview']

    @property
    def supported_boot_interfaces(self) -> list[str]:
        return ['noop', 'fake']

    @property
    def supported_network_interfaces(self) -> list[str]:
        return ['noop']
