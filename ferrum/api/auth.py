# SPDX-License-Identifier: Apache-2.0
"""Authentication: ``noauth`` (the default), ``http_basic`` and ``keystone``.

Public routes are the same under every strategy (:func:`is_public`): the
version discovery documents and the ramdisk agent's lookup and heartbeat.

``http_basic`` behaves as Ironic's: users and bcrypt hashes come from an
Apache htpasswd file (``htpasswd -nbB user password`` makes a line), every
other request needs an ``Authorization: Basic`` header, and a missing or
wrong one is answered with 401 and ``WWW-Authenticate: Basic
realm="Baremetal API"``. The file is checked when the app is built, so a
broken file stops the service from starting, and re-read whenever it
changes on disk. Should a later edit break it, requests are refused (503)
until it is fixed; the server log says why. The check itself is
:mod:`ferrum.common.http_basic`, shared with the conductors' JSON-RPC
endpoint.

``keystone`` wraps the WSGI application in keystonemiddleware's
``auth_token``, configured in ``[keystone_authtoken]``, as Ironic does. It
removes the identity headers a client sent, validates ``X-Auth-Token`` and
sets the headers the request context is built from
(:mod:`ferrum.api.access`). Its own answers pass through unchanged: 401
with ``WWW-Authenticate: Keystone uri=...`` for a missing, invalid or
expired token, before any policy or lookup, and 503 while Keystone cannot
be reached; it never defers that decision to ferrum
(:mod:`ferrum.common.keystone_auth`).

``/metrics`` follows the strategy like any other route, with one
exception: under ``http_basic`` and ``keystone`` a client connecting from
a network of ``[metrics] allowed_scrapers`` reads it without credentials
(:class:`Scrapers`; the handler then skips its policy check).
"""

import ipaddress
import logging
from collections.abc import Callable, Iterable
from typing import Any

import flask
from oslo_config import cfg

from ferrum.api import errors
from ferrum.common import exception
from ferrum.common import http_basic
from ferrum.common import keystone_auth
from ferrum.conf import metrics as metrics_conf

LOG = logging.getLogger(__name__)

#: Version discovery stays public, as in Ironic, so that clients can
#: negotiate a version before they authenticate.
PUBLIC_PATHS = frozenset({'', '/v1'})
#: A ramdisk agent has no credentials: lookup, heartbeat and continuing
#: inspection are public in Ironic too (they only find nodes an agent may
#: be running on).
PUBLIC_PREFIXES = ('/v1/lookup', '/v1/heartbeat/',
                   '/v1/continue_inspection')
REALM = 'Baremetal API'

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


METRICS_PATH = '/metrics'
#: Set in the WSGI environment by this module only (a client's headers
#: arrive as HTTP_*, never under this key).
_SCRAPER = 'ferrum.allowed_scraper'


class ScrapersInvalid(exception.FerrumException):
    msg_fmt = '%(reason)s'


class Scrapers:
    """The networks of ``[metrics] allowed_scrapers``.

    :raises ScrapersInvalid: an entry is not a network.
    """

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        try:
            self.networks = metrics_conf.scraper_networks(conf)
        except ValueError as exc:
            raise ScrapersInvalid(reason=str(exc)) from None

    def admit(self, environ: dict[str, Any]) -> bool:
        """Whether this is a /metrics request from an allowed network (and
        mark it so, for :func:`allowed_scraper`)."""
        if (not self.networks or environ.get('PATH_INFO', '').rstrip('/')
                != METRICS_PATH):
            return False
        try:
            peer = ipaddress.ip_address(
                environ.get('REMOTE_ADDR', '').split('%')[0])
        except ValueError:
            return False
        if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped:
            # An IPv4 client of a server listening on "::".
            peer = peer.ipv4_mapped
        if not any(peer in network for network in self.networks):
            return False
        environ[_SCRAPER] = True
        return True


def allowed_scraper(environ: dict[str, Any]) -> bool:
    """Whether :class:`Scrapers` let this request through unauthenticated."""
    return bool(environ.get(_SCRAPER))


def is_public(path: str) -> bool:
    """Whether ``path`` is served without credentials, whatever the
    strategy."""
    return path.rstrip('/') in PUBLIC_PATHS or path.startswith(
        PUBLIC_PREFIXES)


class _Hook:
    """The ``http_basic`` check, run before every non-public request."""

    def __init__(self, path: str, scrapers: Scrapers) -> None:
        self.check = http_basic.BasicAuth(path)
        self.scrapers = scrapers

    def before_request(self) -> flask.Response | None:
        if (is_public(flask.request.path)
                or self.scrapers.admit(flask.request.environ)):
            return None
        try:
            flask.g.user = self.check.authenticate(
                flask.request.headers.get('Authorization'))
        except http_basic.Unauthorized as exc:
            response = errors.error_response(401, str(exc))
            response.headers['WWW-Authenticate'] = 'Basic realm="%s"' % REALM
            return response
        except http_basic.UserFileInvalid:
            # Logged when the file was re-read; the client gets no path.
            # 503: the server is misconfigured for now, not the request.
            return errors.error_response(
                503, 'The API cannot check credentials: its users file is '
                     'unusable. Retry later; the server log has the '
                     'details.')
        return None


class _Keystone:
    """Public routes straight to the app, every other through auth_token."""

    def __init__(self, app: WSGIApp, conf: cfg.ConfigOpts,
                 scrapers: Scrapers) -> None:
        self.app = app
        self.protected = keystone_auth.protect(app, conf, 'API')
        self.scrapers = scrapers

    def __call__(self, environ: dict[str, Any],
                 start_response: Callable[..., Any]) -> Iterable[bytes]:
        if (is_public(environ.get('PATH_INFO', ''))
                or self.scrapers.admit(environ)):
            return self.app(environ, start_response)
        return self.protected(environ, start_response)


def install(app: flask.Flask, conf: cfg.ConfigOpts) -> None:
    """Hook the configured authentication into ``app``.

    :raises UserFileInvalid: http_basic with an unusable users file.
    :raises ScrapersInvalid: ``[metrics] allowed_scrapers`` has an entry
        that is not a network.
    """
    scrapers = Scrapers(conf)
    if conf.auth_strategy == 'keystone':
        # Around the whole app, as Ironic's: an unauthenticated client
        # gets 401 before any version negotiation.
        app.wsgi_app = _Keystone(app.wsgi_app, conf, scrapers)  # type: ignore[method-assign]
        LOG.info('API authentication: keystone')
        return
    if conf.auth_strategy != 'http_basic':
        return
    check = _Hook(conf.http_basic_auth_user_file, scrapers)
    # First of all hooks, as Ironic's auth middleware wraps its whole app.
    app.before_request_funcs.setdefault(None, []).insert(
        0, check.before_request)
    LOG.info('API authentication: http_basic, users from %s',
             conf.http_basic_auth_user_file)
