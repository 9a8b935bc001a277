# SPDX-License-Identifier: Apache-2.0
"""Hardware types: which interface implementations make up a driver.

A hardware type is what a node's ``driver`` field names. It lists, for each
interface kind, the entry-point names (in
``ferrum.hardware.interfaces.<kind>``)
of the implementations it works with, most preferred first. The conductor
gives a node the first of them that the operator enabled, unless the node or
``default_<kind>_interface`` names another supported one.
"""

import abc


class AbstractHardwareType(abc.ABC):
    """Base class of hardware types, registered in ``ferrum.hardware.types``.

    Subclasses override the ``supported_*_interfaces`` properties they need;
    the optional kinds default to ``['noop']`` (firmware to
    ``['no-firmware']``, Ironic's name).
    """

    @property
    @abc.abstractmethod
    def supported_power_interfaces(self) -> list[str]:
        """Power interface names, most preferred first."""

    @property
    @abc.abstractmethod
    def supported_management_interfaces(self) -> list[str]:
        """Management interface names, most preferred first."""

    @property
    @abc.abstractmethod
    def supported_deploy_interfaces(self) -> list[str]:
        """Deploy interface names, most preferred first."""

    @property
    def supported_boot_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_inspect_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_vendor_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_network_interfaces(self) -> list[str]:
        """Network interfaces; ``noop`` records VIFs and plugs nothing."""
        return ['noop']

    @property
    def supported_firmware_interfaces(self) -> list[str]:
        """Firmware interfaces; ``no-firmware`` reads nothing."""
        return ['no-firmware']

    def supported_interfaces(self, kind: str) -> list[str]:
        """The supported names for ``kind`` (power, management, ...)."""
        names: list[str] = getattr(self, 'supported_%s_interfaces' % kind)
        return list(names)
