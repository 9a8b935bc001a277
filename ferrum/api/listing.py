# SPDX-License-Identifier: Apache-2.0
"""Query parameters shared by the list endpoints, and the links they emit.

``limit``, ``marker``, ``sort_key``, ``sort_dir`` and ``fields`` behave as in
Ironic: ``limit`` is capped at ``[api]max_limit``; a full page gets a
``next`` link carrying the last item as ``marker``.
"""

import dataclasses
import re
import urllib.parse
import uuid as uuidlib
from collections.abc import Callable, Collection, Mapping
from typing import TypeVar

import flask
from oslo_utils import strutils

from ferrum.api import microversion
from ferrum.api import services
from ferrum.common import exception
from ferrum.objects import base

_T = TypeVar('_T')


@dataclasses.dataclass(frozen=True)
class Page:
    limit: int
    marker: str | None
    sort_key: str
    sort_dir: str


#: A Host header of ASCII name characters with an optional port, as
#: werkzeug's host pattern takes them: werkzeug builds its URL without
#: IDNA or quoting (no bracket: an IPv6 literal, a bad one included, takes
#: werkzeug's path). One pass, no backtracking.
_PLAIN_HOST = re.compile(r'[A-Za-z0-9.-]{1,253}(?::([1-9][0-9]{0,4}))?')
#: The port werkzeug leaves out of a scheme's host URL.
_DEFAULT_PORTS = {'http': ':80', 'https': ':443'}


def host_url() -> str:
    """The request's ``host_url`` as werkzeug builds it ("scheme://host/"),
    built from the environment for a plain Host header and no script
    name: werkzeug's IDNA and URL quoting cost more than rendering a node.
    """
    environ = flask.request.environ
    host: str = environ.get('HTTP_HOST') or ''
    scheme = environ.get('wsgi.url_scheme')
    plain = _PLAIN_HOST.fullmatch(host)
    if (plain is None or environ.get('SCRIPT_NAME')
            or scheme not in _DEFAULT_PORTS
            or int(plain.group(1) or 1) > 65535):
        return flask.request.host_url
    return '%s://%s/' % (
        scheme, host.lower().removesuffix(_DEFAULT_PORTS[scheme]))


def base_url() -> str:
    """The URL clients reach the API at, ending with "/".

    Worked out once a request: a page of a thousand rows has two links
    each, and reading the option costs more than rendering a row.
    """
    found: str | None = flask.g.get('base_url')
    if found is None:
        public = services.conf().api.public_endpoint
        found = flask.g.base_url = (public.rstrip('/') + '/' if public
                                    else host_url())
    return found


def resource_links(collection: str, ident: str) -> list[dict[str, str]]:
    base = base_url()
    return [{'href': '%sv1/%s/%s' % (base, collection, ident), 'rel': 'self'},
            {'href': '%s%s/%s' % (base, collection, ident),
             'rel': 'bookmark'}]


def created(collection: str, ident: str,
            rendered: dict[str, object]) -> flask.Response:
    """The 201 answer to a POST: the new resource and its Location."""
    response = flask.jsonify(rendered)
    response.status_code = 201
    response.headers['Location'] = resource_links(collection, ident)[0]['href']
    return response


def parse_bool(name: str) -> bool | None:
    value = flask.request.args.get(name)
    return None if value is None else to_bool('Query parameter ' + name,
                                              value)


def to_bool(what: str, value: str | bool) -> bool:
    """``value`` as a boolean: Ironic accepts "true", "yes", "on", "1"
    and their negations (any case) wherever it takes a boolean.
    """
    if isinstance(value, bool):
        return value
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError:
        raise exception.InvalidParameterValue(
            reason='%s must be true or false, not "%s".'
                   % (what, value[:100])) from None


def parse_limit() -> int:
    """``limit``: at most ``[api]max_limit``, which 0 or none also means."""
    max_limit = int(services.conf().api.max_limit)
    raw_limit = flask.request.args.get('limit')
    if raw_limit is None:
        return max_limit
    try:
        limit = int(raw_limit)
    except ValueError:
        limit = -1
    if limit < 0:
        raise exception.InvalidParameterValue(
            reason='limit must be a whole number 0 or more, not "%s".'
                   % raw_limit[:100])
    return min(limit, max_limit) or max_limit


def parse_page(sortable: Collection[str], default_sort: str = 'id') -> Page:
    args = flask.request.args
    limit = parse_limit()
    sort_key = args.get('sort_key', default_sort)
    if sort_key not in sortable:
        raise exception.InvalidParameterValue(
            reason='The sort_key value "%s" is not a field to sort by; use '
                   'one of %s.' % (sort_key, ', '.join(sorted(sortable))))
    sort_dir = args.get('sort_dir', 'asc').lower()
    if sort_dir not in ('asc', 'desc'):
        raise exception.InvalidParameterValue(
            reason='Invalid sort direction: %s. Acceptable values are '
                   '"asc" or "desc".' % args.get('sort_dir'))
    return Page(limit=limit, marker=args.get('marker') or None,
                sort_key=sort_key, sort_dir=sort_dir)


def parse_versioned_page(sort_versions: Mapping[str, int],
                         what: str) -> Page:
    """:func:`parse_page` over ``sort_versions`` (sort key -> the minor
    version that brought it; 406 for a newer one), with a marker that
    must be a UUID of ``what`` (400 otherwise)."""
    sort_key = flask.request.args.get('sort_key')
    if sort_key is not None and sort_key in sort_versions:
        microversion.require(sort_versions[sort_key],
                             'Sorting by %s' % sort_key)
    page = parse_page(sort_versions)
    if page.marker is not None and not _is_uuid(page.marker):
        raise exception.InvalidParameterValue(
            reason='marker must be a %s UUID, not "%s".'
                   % (what, page.marker[:100]))
    return page


def _is_uuid(value: str) -> bool:
    try:
        uuidlib.UUID(value)
    except ValueError:
        return False
    return len(value) in (32, 36)


def parse_uuid_page(sortable: Collection[str], what: str,
                    load: Callable[[str], _T]) -> tuple[Page, _T | None]:
    """The page, and the marker loaded by ``load`` from its UUID (a
    marker that is no UUID is a 400 naming ``what``)."""
    page = parse_page(sortable)
    if page.marker is None:
        return page, None
    if not base.is_uuid_like(page.marker):
        raise exception.InvalidParameterValue(
            reason='marker must be a %s UUID, not "%s".'
                   % (what, page.marker[:100]))
    return page, load(page.marker)


def parse_fields(available: Collection[str],
                 since_minor: int | None = 8) -> list[str] | None:
    """The fields asked for with ``fields=a,b``, or None for all.

    :param since_minor: the microversion that brought ``fields``; None
        for ferrum's extensions, which no microversion gates.
    """
    raw = flask.request.args.get('fields')
    if raw is None:
        return None
    if since_minor is not None:
        microversion.require(since_minor, 'The fields parameter')
    fields = [f.strip() for f in raw.split(',') if f.strip()]
    unknown = [f for f in fields if f not in available]
    if unknown:
        raise exception.InvalidParameterValue(
            reason='Field(s) "%s" are not valid at API version %s.' % (
                ', '.join(unknown),
                microversion.as_string(microversion.request_version())))
    return fields


def next_link(page: Page, returned: int,
              last_marker: str | None) -> dict[str, str]:
    """``{'next': url}`` when the page is full, else ``{}``.

    The link repeats the request's own path (``/detail`` included) and
    every query parameter but ``marker`` and ``limit``, so the next page
    is the same view with the same filters and ``fields``.
    """
    if not returned or returned < page.limit or last_marker is None:
        return {}
    query = [(key, value) for key, value in
             flask.request.args.items(multi=True)
             if key not in ('marker', 'limit')]
    query += [('limit', str(page.limit)), ('marker', last_marker)]
    return {'next': '%s%s?%s' % (base_url(), flask.request.path.lstrip('/'),
                                 urllib.parse.urlencode(query))}


def list_fields(available: list[str], summary: Collection[str],
                on_detail_path: bool, detail_since: int = 43) -> list[str]:
    """The fields a list shows: ``fields=``, else all or the summary.

    ``on_detail_path`` is true for ``/detail``; elsewhere ``detail=true``
    (API 1.43, or ``detail_since`` for lists that had it from the start)
    asks for every field too.
    """
    fields = parse_fields(available)
    detail = on_detail_path
    if flask.request.args.get('detail') is not None:
        microversion.require(detail_since, 'The detail parameter')
        if on_detail_path:
            raise exception.InvalidParameterValue(
                reason='The detail parameter cannot be used on /detail.')
        detail = bool(parse_bool('detail'))
    if fields is not None:
        if detail:
            raise exception.InvalidParameterValue(
                reason='Use either fields or detail, not both.')
        return fields
    if detail:
        return available
    # The summary of an older version lacks the fields it did not have.
    return [name for name in summary if name in available]
