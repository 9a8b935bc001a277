# SPDX-License-Identifier: Apache-2.0
"""The ``.json`` suffix of URLs before API 1.91, as Ironic treats it.

Ironic's web framework once took ``/v1/nodes/n1.json`` to mean node
``n1`` answered as JSON. Ironic keeps that for requests that name a
version before 1.91 (and only those: without a version header the path
is left alone, as Ironic leaves it): the suffix is dropped before
routing, and a resource that is then not found is looked up again with
the suffix (a node called ``n1.json``). From 1.91 a path is taken as
written.
"""

from collections.abc import Callable, Iterable
from typing import Any

import microversion_parse

from ferrum.api import microversion

#: Set in the WSGI environment when the suffix was dropped.
STRIPPED = 'ferrum.json_suffix'
_SUFFIX = '.json'
_MINOR = 91


def _minor(environ: dict[str, Any]) -> int | None:
    try:
        requested = microversion_parse.get_version(
            microversion.environ_headers(environ),
            service_type=microversion.SERVICE_TYPE,
            legacy_headers=[microversion.LEGACY_HEADER])
        major, minor = (int(part) for part in str(requested).split('.'))
    except (TypeError, ValueError):
        return None  # none, "latest" or garbage: negotiation answers
    return minor if major == 1 else None


class JsonSuffix:
    """WSGI middleware: drops ``.json`` from paths of requests before
    1.91."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any],
                 start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get('PATH_INFO', '').rstrip('/')
        if path.endswith(_SUFFIX):
            minor = _minor(environ)
            if minor is not None and minor < _MINOR:
                environ['PATH_INFO'] = path[:-len(_SUFFIX)]
                environ[STRIPPED] = True
        return self.app(environ, start_response)
