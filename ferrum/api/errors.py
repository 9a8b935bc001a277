# SPDX-License-Identifier: Apache-2.0
"""Errors as Ironic shapes them, and the last line of defence against 500s.

Ironic's body is ``{"error_message": "<JSON string>"}`` whose string holds
``faultstring``, ``faultcode`` and ``debuginfo``; python-ironicclient and
openstacksdk both parse it. A ferrum exception carries its HTTP code; any
other exception is logged with its traceback and answered with a generic
500 that never includes the traceback.
"""

import json
import logging

import flask
from oslo_db import exception as db_exc
from werkzeug import exceptions as http_exc

from ferrum.common import exception

LOG = logging.getLogger(__name__)
#: The body in ``flask.g`` once it was read whole.
BODY_READ = 'ferrum_body'


def error_response(code: int, message: str) -> flask.Response:
    fault = {'faultstring': message,
             'faultcode': 'Client' if code < 500 else 'Server',
             'debuginfo': None}
    response = flask.jsonify({'error_message': json.dumps(fault)})
    response.status_code = code
    return response


def _close_if_body_unread(response: flask.Response) -> None:
    """An answer given before the body was read ends the connection: the
    unread bytes would otherwise be taken for the client's next request."""
    request = flask.request
    has_body = bool(request.content_length) or bool(
        request.headers.get('Transfer-Encoding'))
    if has_body and flask.g.get(BODY_READ) is None:
        response.headers['Connection'] = 'close'


def from_ferrum(exc: exception.FerrumException) -> flask.Response:
    if exc.code >= 500:
        LOG.error('%s: %s', type(exc).__name__, exc)
    response = error_response(exc.code, str(exc))
    _close_if_body_unread(response)
    if isinstance(exc, exception.TemporaryFailure):
        # The client may retry, and this says when (RFC 9110, 10.2.3).
        response.headers['Retry-After'] = str(getattr(exc, 'retry_after', 1))
    return response


def from_http(exc: http_exc.HTTPException) -> flask.Response:
    """Werkzeug's own errors (unknown route, wrong method, bad JSON)."""
    code = exc.code or 500
    messages = {
        404: 'The resource could not be found: %s' % flask.request.path,
        405: 'The method %s is not allowed for %s' % (
            flask.request.method, flask.request.path),
    }
    response = error_response(code, messages.get(code, exc.description or
                                                 exc.name))
    _close_if_body_unread(response)
    if code == 405 and isinstance(exc, http_exc.MethodNotAllowed):
        response.headers['Allow'] = ', '.join(exc.valid_methods or ())
    return response


def from_database_unreachable(exc: db_exc.DBConnectionError
                              ) -> flask.Response:
    """A lost connection outside ``Database.writer``/``reader`` (which
    raise :class:`~ferrum.common.exception.DatabaseUnavailable` themselves).
    """
    return from_ferrum(exception.DatabaseUnavailable(
        reason=str(exc.inner_exception or exc).splitlines()[0][:200]))


#: A constraint refused a write, or the database chose it as a deadlock's
#: victim: the request met a concurrent change of the same rows.
CONSTRAINT_ERRORS = (db_exc.DBDuplicateEntry, db_exc.DBReferenceError,
                     db_exc.DBDeadlock)


def from_concurrent_change(exc: Exception) -> flask.Response:
    """A database conflict no object turned into its own exception.

    Objects translate the conflicts they expect (a taken MAC, a deleted
    node); one that reaches here was not foreseen, and is logged with its
    traceback as such. The request was not wrong, and what it collided
    with was committed or rolled back meanwhile, so it is a 409 the client
    may retry after reading again, not a 500. The answer names neither
    the constraint nor the values.
    """
    LOG.exception('Database conflict handling %s %s, not translated by '
                  'the object that wrote', flask.request.method,
                  flask.request.path)
    return from_ferrum(exception.Conflict(reason=(
        'the request collided with a concurrent change of the same '
        'resource; read it again, then retry if still needed.')))


def from_unexpected(exc: Exception) -> flask.Response:
    LOG.exception('Unexpected error handling %s %s', flask.request.method,
                  flask.request.path)
    return error_response(500, 'An unexpected error prevented the server '
                               'from fulfilling the request; the server log '
                               'has the details.')
