# SPDX-License-Identifier: Apache-2.0
"""ferrum.drivers.base is the one import of the driver contract: each kind
has its module in ferrum.drivers.interfaces, and base gives them all."""

import importlib
import pkgutil

from ferrum.drivers import base
from ferrum.drivers import interfaces


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
