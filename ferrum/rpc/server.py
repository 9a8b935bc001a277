# SPDX-License-Identifier: Apache-2.0
"""The conductor's JSON-RPC 2.0 endpoint: ``POST /`` calls the manager.

Only the methods of :data:`ferrum.conductor.rpcapi.METHODS` (the members of
the ``ConductorAPI`` Protocol) can be called, each with named parameters
bound to the method's signature before it runs, so a bad call is
``INVALID_PARAMS`` and an error inside the method is never mistaken for one.
A call's ``context`` (beside ``params``: ``user_id`` and ``project_id``) is
the API request's requester, whom the events the call records name
(:mod:`ferrum.common.requester`); anything but a string of at most 255
characters there counts as none. A
ferrum exception becomes a JSON-RPC error carrying its class, HTTP code and
keyword arguments (see :mod:`ferrum.rpc.wire`); anything else is logged
here with its traceback and travels as a plain 500. With
``[json_rpc] auth_strategy = http_basic`` a call without valid HTTP Basic
credentials gets HTTP 401 and reaches nothing; with ``keystone`` a call
without a valid token gets keystonemiddleware's 401, and one whose token
is not a service's gets 403 (see :mod:`ferrum.rpc.service_auth`).
"""

import inspect
import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

from oslo_config import cfg

from ferrum.common import exception
from ferrum.common import http_basic
from ferrum.common import json_depth
from ferrum.common import keystone_auth
from ferrum.common import requester
from ferrum.conductor import manager as manager_mod
from ferrum.conductor import rpcapi
from ferrum.rpc import service_auth
from ferrum.rpc import wire

LOG = logging.getLogger(__name__)
#: Deepest call accepted: see handle().
_MAX_DEPTH = 64
#: Most JSON values in a call: see handle().
_MAX_VALUES = 200000
#: What a call may add to the largest body the API accepts: the envelope
#: (method, id, context, the node's id) and the JSON escapes a value gains
#: on its way (a config drive is base64, which needs none).
_ENVELOPE = 64 * 1024

Manager = manager_mod.ConductorManager


def max_call_size(conf: cfg.ConfigOpts) -> int:
    """The largest call body served, in bytes: the largest body the API
    accepts (``[api] max_json_body_size_provision``, or
    ``max_json_body_size`` if larger), and an envelope.

    A call carries what one API request brought, except an update, which
    carries the whole fields a PATCH changed: a node whose ``extra`` (say)
    many PATCHes grew past this limit can then only have that field
    removed (a small call), not changed.
    """
    largest: int = max(conf.api.max_json_body_size,
                       conf.api.max_json_body_size_provision)
    return largest * 1024 + _ENVELOPE


#: JSON-RPC 2.0 error codes of the protocol itself.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


def _error(call_id: Any, code: int, message: str,
           data: dict[str, Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {'code': code, 'message': message}
    if data is not None:
        error['data'] = data
    return {'jsonrpc': '2.0', 'error': error, 'id': call_id}


def handle(manager: Manager | None, host: str, body: bytes
           ) -> dict[str, Any]:
    """The JSON-RPC response document for one request body."""
    # The API already refused bodies deeper than [api] max_json_body_depth
    # (at most 50) or holding more values than [api] max_json_body_values
    # (at most 100,000), and PATCH results the same way; a call carries
    # one of them in an envelope of a few levels and tens of values. More
    # means something other than the API sent it: parse nothing.
    excess = json_depth.excess(body, _MAX_DEPTH, _MAX_VALUES)
    if excess is json_depth.Bound.DEPTH:
        return _error(None, PARSE_ERROR, 'The call nests more than %d levels '
                      'deep.' % _MAX_DEPTH)
    if excess is json_depth.Bound.VALUES:
        return _error(None, PARSE_ERROR, 'The call holds more than %d JSON '
                      'values.' % _MAX_VALUES)
    try:
        request = json.loads(body)
    except ValueError as exc:
        return _error(None, PARSE_ERROR, 'Not JSON: %s' % exc)
    if not isinstance(request, dict):
        return _error(None, INVALID_REQUEST, 'A call is a JSON object.')
    call_id = request.get('id')
    name = str(request.get('method'))
    if name not in rpcapi.METHODS:
        return _error(call_id, METHOD_NOT_FOUND,
                      'No such method: %s' % name[:100])
    params = request.get('params', {})
    if not isinstance(params, dict):
        return _error(call_id, INVALID_PARAMS, 'params must be an object.')
    if manager is None:
        return {'jsonrpc': '2.0', 'id': call_id, 'error': wire.encode_error(
            exception.ConductorNotServing(host=host))}
    method = getattr(manager, name)
    try:
        bound = inspect.signature(method).bind(**params)
    except TypeError as exc:
        return _error(call_id, INVALID_PARAMS, '%s: %s' % (name, exc))
    context = request.get('context')
    if not isinstance(context, dict):
        context = {}
    try:
        with requester.acting_for(context.get('user_id'),
                                  context.get('project_id')):
            result = method(*bound.args, **bound.kwargs)
    except exception.FerrumException as exc:
        return {'jsonrpc': '2.0', 'error': wire.encode_error(exc),
                'id': call_id}
    except Exception as exc:
        LOG.exception('JSON-RPC call %s failed on conductor %s',
                      request.get('method'), host)
        return {'jsonrpc': '2.0', 'id': call_id, 'error': wire.encode_error(
            exception.FerrumException(
                'Conductor %s failed unexpectedly: %s' % (host, exc)))}
    return {'jsonrpc': '2.0', 'result': wire.encode_result(result),
            'id': call_id}


class Application:
    """The WSGI application; the manager is fetched on each call.

    It is served before the conductor has finished starting, so that the
    address it registers already answers, and until the conductor has
    stopped; while there is no manager (starting, or stopping) calls get
    :class:`~ferrum.common.exception.ConductorNotServing`.
    """

    def __init__(self, manager: Callable[[], Manager | None],
                 host: str, user_file: str | None = None,
                 service_project: str | None = None, *,
                 max_body: int) -> None:
        """
        :param max_body: the largest body served, in bytes (see
            :func:`max_call_size`); a larger one is refused unread.
        :param user_file: the htpasswd file for HTTP Basic authentication;
            None serves every call.
        :param service_project: if set, serve only calls whose identity
            headers, set by keystonemiddleware in front (see
            :func:`application`), are a service's of that project (see
            :func:`service_auth.refusal`).
        :raises UserFileInvalid: ``user_file`` is unusable.
        """
        self._manager = manager
        self._host = host
        self._auth = (http_basic.BasicAuth(
            user_file, option='[json_rpc] http_basic_auth_user_file')
            if user_file else None)
        self._service_project = service_project
        self._max_body = max_body

    def _refused(self, environ: dict[str, Any]
                 ) -> tuple[str, str, list[tuple[str, str]]] | None:
        """(status, why, headers) refusing the call, or None to serve it."""
        if self._service_project is not None:
            why = service_auth.refusal(environ, self._service_project)
            return None if why is None else ('403 Forbidden', why, [])
        if self._auth is None:
            return None
        try:
            self._auth.authenticate(environ.get('HTTP_AUTHORIZATION'))
        except (http_basic.Unauthorized, http_basic.UserFileInvalid) as exc:
            return ('401 Unauthorized', str(exc), [
                ('WWW-Authenticate', 'Basic realm="ferrum JSON-RPC"')])
        return None

    def __call__(self, environ: dict[str, Any],
                 start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get('REQUEST_METHOD') != 'POST':
            start_response('405 Method Not Allowed',
                           [('Allow', 'POST'), ('Content-Length', '0')])
            return [b'']
        refused = self._refused(environ)
        if refused is not None:
            status, why, headers = refused
            payload = wire.dumps(_error(None, INVALID_REQUEST, why))
            start_response(status, [
                ('Content-Type', 'application/json'), *headers,
                ('Content-Length', str(len(payload)))])
            return [payload]
        try:
            length = int(environ.get('CONTENT_LENGTH') or 0)
        except ValueError:
            length = 0
        status = '200 OK'
        if length > self._max_body:
            # Unread, as the API refuses a body over its limit.
            status = '413 Request Entity Too Large'
            document = _error(None, INVALID_REQUEST, (
                'The call is larger than %d bytes ([api] '
                'max_json_body_size_provision or max_json_body_size on '
                'this conductor, and %d for the envelope); it was not '
                'read.' % (self._max_body, _ENVELOPE)))
        else:
            body = environ['wsgi.input'].read(length) if length > 0 else b''
            document = handle(self._manager(), self._host, body)
        payload = wire.dumps(document)
        start_response(status, [('Content-Type', 'application/json'),
                                ('Content-Length', str(len(payload)))])
        return [payload]


WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def application(conf: cfg.ConfigOpts, manager: Callable[[], Manager | None]
                ) -> WSGIApp:
    """The endpoint as ``[json_rpc] auth_strategy`` protects it.

    :raises UserFileInvalid: http_basic with an unusable users file.
    """
    strategy = conf.json_rpc.auth_strategy
    if strategy == 'keystone':
        # The services check trusts the identity headers only because
        # auth_token, in front of it, set them.
        return keystone_auth.protect(
            Application(manager, conf.host,
                        service_project=conf.rbac_service_project_name,
                        max_body=max_call_size(conf)), conf,
            'JSON-RPC endpoint')
    user_file = (conf.json_rpc.http_basic_auth_user_file
                 if strategy == 'http_basic' else None)
    return Application(manager, conf.host, user_file,
                       max_body=max_call_size(conf))
