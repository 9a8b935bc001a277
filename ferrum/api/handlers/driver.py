# SPDX-License-Identifier: Apache-2.0
"""``/v1/drivers``: the hardware types live conductors run, and properties.

Everything comes from what the conductors registered in the database: the
API process loads no driver, and a conductor whose heartbeat stopped drops
out of a driver's ``hosts`` (the driver disappears with its last host).
"""

from typing import Any

import flask

from ferrum.api import access
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.views import driver as driver_view
from ferrum.common import exception
from ferrum.objects import conductor as conductor_obj

_TYPES = ('classic', 'dynamic')


def _active(name: str | None = None
            ) -> list[conductor_obj.ActiveHardwareType]:
    return conductor_obj.active_hardware_types(
        services.db(), services.conf().conductor.heartbeat_timeout, name)


def _get(driver_name: str) -> conductor_obj.ActiveHardwareType:
    found = _active(driver_name)
    if not found:
        raise exception.DriverNotFound(driver=driver_name)
    return found[0]


def list_drivers() -> dict[str, Any]:
    access.check('baremetal:driver:get')
    driver_type = flask.request.args.get('type')
    if driver_type is not None:
        microversion.require(30, 'The type parameter')
        if driver_type not in _TYPES:
            raise exception.InvalidParameterValue(
                reason='"type" filter must be one of "classic" or '
                       '"dynamic", if specified; not "%s".'
                       % driver_type[:100])
    detail = False
    if flask.request.args.get('detail') is not None:
        microversion.require(30, 'The detail parameter')
        detail = bool(listing.parse_bool('detail'))
    fields = listing.parse_fields(driver_view.available_fields())
    if fields is not None and detail:
        raise exception.InvalidParameterValue(
            reason='Use either fields or detail, not both.')
    if fields is None:
        available = driver_view.available_fields()
        fields = available if detail else [
            name for name in driver_view.LIST_FIELDS if name in available]
    # ferrum, like Ironic since Rocky, has no classic drivers.
    found = [] if driver_type == 'classic' else _active()
    return {'drivers': [driver_view.render(t, fields) for t in found]}


def get_driver(driver_name: str) -> dict[str, Any]:
    access.check('baremetal:driver:get')
    fields = (listing.parse_fields(driver_view.available_fields())
              or driver_view.available_fields())
    return driver_view.render(_get(driver_name), fields)


def get_driver_properties(driver_name: str) -> dict[str, Any]:
    """driver_info key -> description, over the default interfaces."""
    access.check('baremetal:driver:get_properties')
    return dict(_get(driver_name).properties)
