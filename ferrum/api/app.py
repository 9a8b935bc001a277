# SPDX-License-Identifier: Apache-2.0
"""Builds the WSGI application around the route table.

Every request negotiates its microversion first; every response carries
the version headers; every error, expected or not, has Ironic's JSON error
shape and never a traceback.
"""

import datetime
import uuid
from collections.abc import Callable
from typing import Any

import flask
from oslo_config import cfg
from oslo_db import exception as db_exc
from werkzeug import exceptions as http_exc

from ferrum.api import access
from ferrum.api import auth
from ferrum.api import body
from ferrum.api import errors
from ferrum.api import json_suffix
from ferrum.api import listing
from ferrum.api import metrics
from ferrum.api import microversion
from ferrum.api import routes
from ferrum.api.handlers import metrics as metrics_handler
from ferrum.common import exception
from ferrum.conductor import rpcapi
from ferrum.db import api as db_api
from ferrum.objects import base
from ferrum.rpc import registry


def _note_route() -> None:
    """Note the route template Flask matched where the request metrics
    read it (:data:`ferrum.api.metrics.ROUTE`): they would else match the
    URL a second time."""
    rule = flask.request.url_rule
    if rule is not None:
        flask.request.environ[metrics.ROUTE] = rule.endpoint


def _negotiate() -> None:
    flask.g.api_version = None
    # The version headers only, read from the environment: under
    # keystone, auth_token adds some twenty headers to every request,
    # and a Headers lookup walks them all.
    flask.g.api_version = microversion.negotiate(
        microversion.environ_headers(flask.request.environ))


def _check_url() -> None:
    """Refuse what no handler can use: a NUL anywhere, an invalid Host.

    Databases refuse NUL in text; links in responses are built from the
    Host header, which must therefore be a host name.
    """
    request = flask.request
    try:
        # The links' own URL (a plain Host is built without werkzeug's
        # IDNA, see listing.host_url).
        listing.host_url().encode('ascii')
    except (UnicodeError, ValueError):
        raise exception.InvalidParameterValue(
            reason='The Host header is not a valid host name.') from None
    if '\x00' in request.path or any('\x00' in key or '\x00' in value
                                      for key, value in request.args.items(
                                          multi=True)):
        raise exception.InvalidParameterValue(
            reason='The URL contains a NUL character (%00); no identifier '
                   'or query parameter accepts one.')


#: Query parameters one request may carry, and the longest value: more is
#: no list filter, only a way to make the server work (see
#: doc/api-versions.md, "Bounds").
MAX_QUERY_PARAMETERS = 50
MAX_QUERY_VALUE = 1024


def _limit_query() -> None:
    args = flask.request.args
    if len(args) > MAX_QUERY_PARAMETERS:
        raise exception.InvalidParameterValue(
            reason='The query has %d parameters; at most %d are accepted.'
                   % (len(args), MAX_QUERY_PARAMETERS))
    for key, value in args.items(multi=True):
        if len(key) > MAX_QUERY_VALUE or len(value) > MAX_QUERY_VALUE:
            raise exception.InvalidParameterValue(
                reason='The query parameter %s is longer than %d '
                       'characters.' % (key[:60], MAX_QUERY_VALUE))


def _add_version_headers(response: flask.Response) -> flask.Response:
    microversion.add_headers(response, flask.g.get('api_version'))
    # Every answer names its request, as Ironic's (oslo.middleware's
    # request ids): X-OpenStack-Request-Id (1.107) and the older
    # OpenStack-Request-Id, the same value, at every version.
    # The request context's id where there is one (its log lines say it).
    ctx = flask.g.get('context')
    request_id = (ctx.request_id if ctx is not None and ctx.request_id
                  else 'req-%s' % uuid.uuid4())
    response.headers['X-OpenStack-Request-Id'] = request_id
    response.headers['OpenStack-Request-Id'] = request_id
    return response


def _endpoint(method_map: dict[str, routes.Handler]) -> Any:
    def dispatch(**kwargs: Any) -> Any:
        method = flask.request.method
        # Flask answers HEAD with the GET handler's headers and no body.
        handler = method_map['GET' if method == 'HEAD' else method]
        return handler(**kwargs)
    return dispatch


class _App(flask.Flask):
    """Flask, told that every view and hook is a plain function."""

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        # Flask asks for each hook and view of each request whether it is
        # a coroutine function (some ten inspections a request); ferrum
        # has none, and Flask's async support is not installed.
        return func


def create_app(conf: cfg.ConfigOpts, db: db_api.Database,
               rpc: rpcapi.ConductorAPI,
               conductors: registry.ConductorRegistry | None = None,
               clock: Callable[[], datetime.datetime] = base.utcnow,
               service_metrics: bool = False) -> flask.Flask:
    """The API application on ``db``, reaching conductors through ``rpc``.

    :param conductors: the view of the conductors ``rpc`` routes by, so
        that nodes show the conductor their calls go to; by default one
        of all live conductors.
    :param clock: "now" as naive UTC, where a handler decides by it (a
        lease's window); tests pass the conductor's injected clock.
    :param service_metrics: a conductor runs in this process: /metrics
        serves its service metrics too.
    """
    app = _App('ferrum.api')
    app.config['FERRUM_CONF'] = conf
    app.config['FERRUM_DB'] = db
    app.config['FERRUM_RPC'] = rpc
    app.config['FERRUM_CLOCK'] = clock
    app.config['FERRUM_REGISTRY'] = (
        conductors or registry.ConductorRegistry(db, conf))
    app.json.sort_keys = False  # type: ignore[attr-defined]
    # "//" in a path is a 404 like any unknown path, not a redirect whose
    # Location would echo the raw request back.
    app.url_map.merge_slashes = False
    for path, method_map in routes.ROUTES.items():
        app.add_url_rule(path, endpoint=path, view_func=_endpoint(method_map),
                         methods=list(method_map), strict_slashes=False)
    app.before_request(_note_route)
    app.before_request(body.limit_size)
    app.before_request(_negotiate)
    app.before_request(_check_url)
    app.before_request(_limit_query)
    auth.install(app, conf)
    access.install(app)
    app.after_request(_add_version_headers)
    app.register_error_handler(exception.FerrumException, errors.from_ferrum)
    app.register_error_handler(http_exc.HTTPException, errors.from_http)
    app.register_error_handler(db_exc.DBConnectionError,
                               errors.from_database_unreachable)
    for conflict in errors.CONSTRAINT_ERRORS:
        app.register_error_handler(conflict, errors.from_concurrent_change)
    app.register_error_handler(Exception, errors.from_unexpected)
    collected = app.config[metrics_handler.REGISTRY] = (
        metrics.build_registry(conf, db, service_metrics))
    app.wsgi_app = json_suffix.JsonSuffix(  # type: ignore[method-assign]
        app.wsgi_app)
    # Outermost, around authentication too: a 401 is a request as well.
    app.wsgi_app = metrics.RequestMetrics(  # type: ignore[method-assign]
        app.wsgi_app, app.url_map, collected)
    return app
