# SPDX-License-Identifier: Apache-2.0
"""``/v1/conductors`` (API 1.49 and later): every registered conductor.

Dead conductors stay listed, with ``alive`` false, as in Ironic. Below 1.49
the endpoint answers 404, again as Ironic does: the resource does not exist
at that version (a 406 would suggest a version header problem with an
endpoint the client knows).
"""

from typing import Any

from ferrum.api import access
from ferrum.api import listing
from ferrum.api import microversion
from ferrum.api import services
from ferrum.api.views import conductor as conductor_view
from ferrum.common import exception
from ferrum.objects import conductor as conductor_obj

_MINOR = 49


def _check_version() -> None:
    if not microversion.at_least(_MINOR):
        raise exception.NotFoundAtVersion(
            what='/v1/conductors', minor=_MINOR,
            header=microversion.LEGACY_HEADER,
            current=microversion.as_string(microversion.request_version()))
    access.check('baremetal:conductor:get')


def _render_all(conductors: list[conductor_obj.Conductor],
                fields: list[str]) -> list[dict[str, Any]]:
    db = services.db()
    ctx = conductor_view.Context(
        heartbeat_timeout=services.conf().conductor.heartbeat_timeout,
        drivers=(conductor_obj.hardware_types_of(
            db, [c.id for c in conductors]) if 'drivers' in fields else {}))
    return [conductor_view.render(c, fields, ctx) for c in conductors]


def list_conductors() -> dict[str, Any]:
    _check_version()
    fields = listing.parse_fields(conductor_view.FIELDS)
    detail = listing.parse_bool('detail')
    if fields is not None and detail:
        raise exception.InvalidParameterValue(
            reason='Use either fields or detail, not both.')
    if fields is None:
        fields = list(conductor_view.FIELDS if detail
                      else conductor_view.LIST_FIELDS)
    page = listing.parse_page(conductor_view.SORT_COLUMNS)
    db = services.db()
    marker = (conductor_obj.get(db, page.marker)
              if page.marker is not None else None)
    conductors = conductor_obj.list_page(
        db, page.limit, conductor_view.SORT_COLUMNS[page.sort_key],
        page.sort_dir, marker)
    result: dict[str, Any] = {'conductors': _render_all(conductors, fields)}
    result.update(listing.next_link(
        page, len(conductors),
        conductors[-1].hostname if conductors else None))
    return result


def get_conductor(hostname: str) -> dict[str, Any]:
    _check_version()
    fields = (listing.parse_fields(conductor_view.FIELDS)
              or list(conductor_view.FIELDS))
    return _render_all([conductor_obj.get(services.db(), hostname)],
                       fields)[0]
