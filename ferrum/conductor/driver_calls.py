# SPDX-License-Identifier: Apache-2.0
"""Driver hooks timed and their failures counted, for the service metrics.

Every driver hook the conductor calls goes through one of the interface
instances the driver registry loaded (:mod:`ferrum.drivers.loader`): one
instance per enabled interface serves every node. :func:`instrument`
puts a timing wrapper, as an instance attribute, over each hook of each
instance, once, when the conductor starts. The wrapper looks the hook up
on the class at every call, as ordinary attribute access would, so the
class stays what callers and step discovery see (``type(interface)``),
and replacing a method on the class later still takes effect.

The hooks are the methods of the interface kinds' base classes whose
first argument is the task; the hardware type is the task's node's
``driver``.
"""

import functools
import inspect
import time
from collections.abc import Callable, Iterator
from typing import Any

from ferrum.common import metrics
from ferrum.drivers import base
from ferrum.drivers import loader

#: Marks an instance already instrumented (one instance may be loaded
#: under two entry-point names, or the conductor restarted in-process).
_DONE = '_ferrum_instrumented'


def hooks(kind: str) -> Iterator[str]:
    """The hook names of interface ``kind``: its base class's public
    methods whose first argument (after ``self``) is ``task``."""
    for name, member in inspect.getmembers(base.INTERFACES[kind],
                                           inspect.isfunction):
        if name.startswith('_'):
            continue
        params = list(inspect.signature(member).parameters)
        if len(params) > 1 and params[1] == 'task':
            yield name


def _class_attribute(obj: object, name: str) -> Any:
    """``obj.name`` as the class gives it, ignoring the instance's own.

    The class's MRO is walked directly (``inspect.getattr_static`` does
    the same with checks a method does not need, at 15 µs a hook call).
    """
    klass = type(obj)
    for owner in klass.__mro__:
        if name in owner.__dict__:
            found = owner.__dict__[name]
            break
    else:
        raise AttributeError(name)
    get = getattr(type(found), '__get__', None)
    return get(found, obj, klass) if get is not None else found


def _timed(obj: object, kind: str, name: str) -> Callable[..., Any]:
    # The histogram of each hardware type, found once (labels() takes a
    # lock and builds a key at every call).
    seconds: dict[str, Any] = {}

    @functools.wraps(getattr(type(obj), name))
    def call(task: Any, *args: Any, **kwargs: Any) -> Any:
        hardware_type = str(getattr(getattr(task, 'node', None), 'driver',
                                    None) or 'unknown')
        started = time.monotonic()
        try:
            return _class_attribute(obj, name)(task, *args, **kwargs)
        except BaseException:
            metrics.DRIVER_CALL_ERRORS.labels(hardware_type, kind,
                                              name).inc()
            raise
        finally:
            histogram = seconds.get(hardware_type)
            if histogram is None:
                histogram = seconds[hardware_type] = (
                    metrics.DRIVER_CALL_SECONDS.labels(hardware_type, kind,
                                                       name))
            histogram.observe(time.monotonic() - started)
    return call


def instrument(drivers: loader.DriverRegistry) -> None:
    """Time the hooks of every loaded interface instance (see above)."""
    for kind, loaded in drivers.interfaces.items():
        names = list(hooks(kind))
        for obj in loaded.values():
            if getattr(obj, _DONE, False):
                continue
            for name in names:
                setattr(obj, name, _timed(obj, kind, name))
            setattr(obj, _DONE, True)
