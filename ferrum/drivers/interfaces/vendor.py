# SPDX-License-Identifier: Apache-2.0
"""The vendor interface: methods marked :func:`passthru`, called through
Ironic's ``vendor_passthru`` API.

The rules every implementation follows are in :mod:`ferrum.drivers.base`.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

from ferrum.drivers import interfaces

#: The attribute :func:`passthru` sets on a method it marks.
PASSTHRU = '_ferrum_passthru'


@dataclasses.dataclass(frozen=True)
class PassthruSpec:
    """How a vendor passthru method is called (see :func:`passthru`)."""

    http_methods: tuple[str, ...]
    async_call: bool
    description: str
    require_exclusive_lock: bool

    def as_dict(self) -> dict[str, Any]:
        """The entry ``GET .../vendor_passthru/methods`` shows, as Ironic."""
        return {'http_methods': list(self.http_methods),
                'async': self.async_call, 'description': self.description,
                'attach': False,
                'require_exclusive_lock': self.require_exclusive_lock}


def passthru(http_methods: list[str], async_call: bool = True,
             description: str = '', require_exclusive_lock: bool = True
             ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark ``method(self, task, **body)`` of a vendor interface as passthru.

    :param http_methods: the HTTP methods that call it (``POST``, ...).
    :param async_call: run it on a worker after the request is answered
        (202); otherwise in the request (200, with the method's return
        value, which must be JSON-serialisable, as the body).
    :param require_exclusive_lock: call it with the node's exclusive lock;
        otherwise with a shared one (then it must only read).
    """
    spec = PassthruSpec(tuple(m.upper() for m in http_methods), async_call,
                        description, require_exclusive_lock)

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(func, PASSTHRU, spec)
        return func
    return mark


class VendorInterface(interfaces.BaseInterface):
    """Vendor-specific extensions: methods marked :func:`passthru`.

    They are called through Ironic's ``/v1/nodes/{node}/vendor_passthru``
    API, ``?method=<name>`` (``.../vendor_passthru/methods`` lists them),
    with the request body as keyword arguments. A method may change the
    node, and may end a wait with ``task.resume()``.
    """

    kind = 'vendor'

    def vendor_routes(self) -> dict[str, 'PassthruSpec']:
        """The passthru methods of this interface, by name."""
        found = {}
        for name in sorted(dir(type(self))):
            spec = getattr(getattr(type(self), name, None), PASSTHRU, None)
            if isinstance(spec, PassthruSpec):
                found[name] = spec
        return found
