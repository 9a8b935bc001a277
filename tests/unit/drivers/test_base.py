# SPDX-License-Identifier: Apache-2.0
"""ferrum.drivers.base is the one import of the driver contract: each kind
has its module in ferrum.drivers.interfaces, and base gives them all."""

import importlib
import pkgutil

from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers import interfaces
from ferrum.drivers.interfaces import power


def test_each_kind_module_holds_the_class_base_gives():
    modules = sorted(info.name for info in pkgutil.iter_modules(
        interfaces.__path__))
    assert modules == sorted(base.INTERFACES)
    for kind, cls in base.INTERFACES.items():
        module = importlib.import_module('ferrum.drivers.interfaces.' + kind)
        assert cls.kind == kind
        assert getattr(module, cls.__name__) is cls
        assert getattr(base, cls.__name__) is cls
        assert cls.__name__ in base.__all__
        assert issubclass(cls, base.BaseInterface)


def test_the_driver_has_one_field_per_kind_in_order():
    fields = [name for name in base.Driver.__dataclass_fields__
              if name != 'hardware_type']
    assert fields == list(base.INTERFACES)


def test_a_power_change_waits_the_request_timeout_else_ironics_default(
        conf):
    conf.set_override('power_state_change_timeout', 60, 'conductor')
    conf.set_override('soft_power_off_timeout', 600, 'conductor')
    waits = {target: power.change_timeout(conf, target)
             for target in (states.POWER_ON, states.POWER_OFF,
                            states.REBOOT, states.SOFT_POWER_OFF,
                            states.SOFT_REBOOT)}
    assert waits == {states.POWER_ON: 60, states.POWER_OFF: 60,
                     states.REBOOT: 60, states.SOFT_POWER_OFF: 600,
                     states.SOFT_REBOOT: 600}
    assert power.change_timeout(conf, states.SOFT_POWER_OFF, 7) == 7
