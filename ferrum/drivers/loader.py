# SPDX-License-Identifier: Apache-2.0
"""Loads the enabled hardware types and interfaces, once, at start-up.

Everything is checked before the conductor takes any work: an enabled name
with no entry point, an entry point that fails to import or instantiate, a
class of the wrong kind, a hardware type with no enabled implementation of
some kind, or a ``default_<kind>_interface`` that an enabled hardware type
does not support. Each failure raises with the entry point's namespace and
name, and the conductor refuses to start. Nothing is loaded lazily later.
"""

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from oslo_config import cfg
from stevedore import named

from ferrum.common import exception
from ferrum.drivers import base
from ferrum.drivers import hardware_type
from ferrum.objects import conductor as conductor_obj

LOG = logging.getLogger(__name__)

TYPES_NAMESPACE = 'ferrum.hardware.types'
INTERFACES_NAMESPACE = 'ferrum.hardware.interfaces.%s'
KINDS = tuple(base.INTERFACES)
_BASES = base.INTERFACES


def _load(namespace: str, names: list[str], what: str) -> dict[str, Any]:
    def missing(names_: Iterable[str]) -> None:
        raise exception.DriverLoadError(
            what=what, name=', '.join(sorted(names_)), namespace=namespace,
            reason='no such entry point is installed; check the spelling '
                   'or install the package that provides it')

    def failed(_manager: Any, entrypoint: Any, exc: BaseException) -> None:
        raise exception.DriverLoadError(
            what=what, name=entrypoint.name, namespace=namespace,
            reason='%s: %s' % (type(exc).__name__, exc))

    if not names:
        return {}
    manager: named.NamedExtensionManager[Any] = named.NamedExtensionManager(
        namespace, names, invoke_on_load=True, name_order=True,
        on_load_failure_callback=failed,
        on_missing_entrypoints_callback=missing)
    return {ext.name: ext.obj for ext in manager}


class DriverRegistry:
    """The loaded hardware types and interface instances of one conductor."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.hardware_types: dict[str, hardware_type.AbstractHardwareType] = (
            _load(TYPES_NAMESPACE, list(conf.enabled_hardware_types),
                  'hardware type'))
        if not self.hardware_types:
            raise exception.DriverLoadError(
                what='hardware type', name='(none)',
                namespace=TYPES_NAMESPACE,
                reason='enabled_hardware_types is empty; enable at least one')
        self.interfaces: dict[str, dict[str, base.BaseInterface]] = {}
        for kind in KINDS:
            namespace = INTERFACES_NAMESPACE % kind
            loaded = _load(namespace,
                           list(conf['enabled_%s_interfaces' % kind]),
                           '%s interface' % kind)
            for name, obj in loaded.items():
                if not isinstance(obj, _BASES[kind]):
                    raise exception.DriverLoadError(
                        what='%s interface' % kind, name=name,
                        namespace=namespace,
                        reason='%s is not a %s' % (
                            type(obj).__name__, _BASES[kind].__name__))
            self.interfaces[kind] = loaded
        for name, hw_type in self.hardware_types.items():
            if not isinstance(hw_type, hardware_type.AbstractHardwareType):
                raise exception.DriverLoadError(
                    what='hardware type', name=name,
                    namespace=TYPES_NAMESPACE,
                    reason='%s is not an AbstractHardwareType'
                    % type(hw_type).__name__)
        self.defaults = self._compute_defaults(conf)

    def check_configuration(self, conf: cfg.ConfigOpts) -> None:
        """Let every enabled interface check its options (conductor start).

        :raises DriverLoadError: naming the entry point and the problem.
        """
        for kind, loaded in self.interfaces.items():
            for name, obj in loaded.items():
                try:
                    obj.check_configuration(conf)
                except exception.FerrumException as exc:
                    raise exception.DriverLoadError(
                        what='%s interface' % kind, name=name,
                        namespace=INTERFACES_NAMESPACE % kind,
                        reason=str(exc)) from exc

    def _compute_defaults(self, conf: cfg.ConfigOpts
                          ) -> dict[str, dict[str, str]]:
        defaults: dict[str, dict[str, str]] = {}
        for hw_name, hw_type in self.hardware_types.items():
            defaults[hw_name] = {}
            for kind in KINDS:
                supported = hw_type.supported_interfaces(kind)
                usable = [n for n in supported if n in self.interfaces[kind]]
                if not usable:
                    raise exception.NoValidInterface(
                        driver=hw_name, kind=kind, supported=supported,
                        enabled=sorted(self.interfaces[kind]))
                explicit = conf['default_%s_interface' % kind]
                if explicit and explicit not in usable:
                    raise exception.IncompatibleInterface(
                        kind=kind, name=explicit, driver=hw_name,
                        supported=usable)
                defaults[hw_name][kind] = explicit or usable[0]
        return defaults

    def usable(self, hw_name: str, kind: str) -> list[str]:
        """Interfaces of ``kind`` that ``hw_name`` supports and are enabled."""
        hw_type = self.hardware_types[hw_name]
        return [n for n in hw_type.supported_interfaces(kind)
                if n in self.interfaces[kind]]

    def check_node_interfaces(self, driver: str,
                              values: Mapping[str, Any]) -> dict[str, str]:
        """Resolve a node's interface fields, filling in defaults.

        :returns: ``{'<kind>_interface': name}`` for every kind.
        :raises DriverNotSupported: the hardware type is not loaded here.
        :raises InterfaceNotSupported: a named interface is not usable.
        """
        if driver not in self.hardware_types:
            raise exception.DriverNotSupported(driver=driver)
        resolved = {}
        for kind in KINDS:
            name = values.get('%s_interface' % kind) or (
                self.defaults[driver][kind])
            usable = self.usable(driver, kind)
            if name not in usable:
                raise exception.InterfaceNotSupported(
                    kind=kind, name=name, driver=driver, valid=usable)
            resolved['%s_interface' % kind] = name
        return resolved

    def build(self, node: Any) -> base.Driver:
        """The :class:`~ferrum.drivers.base.Driver` of a node.

        :param node: an object with the interface fields.
        """
        names = self.check_node_interfaces(
            node.driver, {'%s_interface' % k: getattr(node, '%s_interface' % k)
                          for k in KINDS})
        parts: dict[str, Any] = {
            kind: self.interfaces[kind][names['%s_interface' % kind]]
            for kind in KINDS}
        return base.Driver(hardware_type=node.driver, **parts)

    def all_interface_objects(self) -> list[base.BaseInterface]:
        return [obj for kind in KINDS
                for obj in self.interfaces[kind].values()]

    def advertised(self) -> list[conductor_obj.HardwareInterface]:
        """What the conductor registers for the API, which loads no driver.

        Enough to route nodes, to answer ``/v1/drivers`` and to mask the
        declared secrets in ``driver_info``.
        """
        rows = []
        for hw_name in sorted(self.hardware_types):
            for kind in KINDS:
                for name in self.usable(hw_name, kind):
                    iface = self.interfaces[kind][name]
                    rows.append(conductor_obj.HardwareInterface(
                        hardware_type=hw_name, interface_type=kind,
                        interface_name=name,
                        default=name == self.defaults[hw_name][kind],
                        properties=iface.get_properties(),
                        secret_properties=frozenset(iface.secret_properties)))
        return rows
