# SPDX-License-Identifier: Apache-2.0
"""Request bodies: JSON parsing, JSON Schema validation and JSON Patch.

Every problem with a body is a 400 whose message says which part of the
body is wrong and what was expected, never a 500.
"""

import copy
import json
from collections.abc import Mapping
from typing import Any

import flask
import jsonpatch
import jsonschema

from ferrum.api import errors
from ferrum.api import microversion
from ferrum.api import services
from ferrum.common import exception
from ferrum.common import json_depth

#: A JSON Patch document as Ironic accepts it: add, replace and remove only.
PATCH_SCHEMA: dict[str, Any] = {
    'type': 'array',
    # Ironic sets no bound; a resource has some 60 fields.
    'maxItems': 500,
    'items': {
        'type': 'object',
        'properties': {
            'op': {'type': 'string', 'enum': ['add', 'replace', 'remove']},
            'path': {'type': 'string', 'pattern': '^(/[^/]+)+$'},
            'value': {},
        },
        'required': ['op', 'path'],
        'additionalProperties': False,
    },
}


def _where(error: jsonschema.ValidationError) -> str:
    path = '/'.join(str(part) for part in error.absolute_path)
    return ' at "/%s"' % path if path else ''


#: id(schema) -> (schema, its validator). Building a validator costs more
#: than validating a body; holding the schema keeps its id from reuse.
_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}
_MAX_VALIDATORS = 256


def _validator(schema: dict[str, Any]) -> Any:
    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    if len(_VALIDATORS) >= _MAX_VALIDATORS:
        _VALIDATORS.clear()  # schemas built per request would pile up
    validator = jsonschema.Draft202012Validator(schema)
    _VALIDATORS[id(schema)] = (schema, validator)
    return validator


#: Characters of a client's value repeated in an error message: enough to
#: recognise it, never the megabytes an attacker sent.
ECHO_LIMIT = 100


def echo(value: Any) -> str:
    """``value`` as an error message quotes it: its repr, cut short."""
    text = repr(value)
    if len(text) <= ECHO_LIMIT:
        return text
    return '%s... (%d characters)' % (text[:ECHO_LIMIT], len(text))


def validate(document: Any, schema: dict[str, Any], what: str) -> None:
    """Raise InvalidParameterValue naming the first problem in ``document``."""
    validator = _validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is not None:
        # jsonschema quotes the whole offending value in its message.
        message = error.message.replace(repr(error.instance),
                                        echo(error.instance))
        if len(message) > 4 * ECHO_LIMIT:
            message = message[:4 * ECHO_LIMIT] + '...'
        raise exception.InvalidParameterValue(
            reason='Invalid %s%s: %s' % (what, _where(error), message))


class UnsupportedMediaType(exception.FerrumException):
    msg_fmt = ('The request body is %(given)s; ferrum accepts JSON only. '
               'Send it with "Content-Type: application/json".')
    code = 415


def _check_media_type() -> None:
    """JSON bodies only (RFC 8259): the media type says so, or is absent."""
    given = flask.request.mimetype
    if given and given != 'application/json' and not given.endswith(
            '+json'):
        raise UnsupportedMediaType(given=echo(given)[:60])


def _check_shape(raw: bytes, what: str) -> None:
    """Refuse JSON ``raw`` nested deeper or holding more values than the
    [api] options allow, from a scan of its bytes (nothing is parsed).

    :param what: the subject of the 400's sentence, e.g. "The request body".
    """
    api = services.conf().api
    bound = json_depth.excess(raw, api.max_json_body_depth,
                              api.max_json_body_values)
    if bound is json_depth.Bound.DEPTH:
        raise exception.InvalidParameterValue(
            reason='%s nests arrays and objects more than %d levels deep '
                   '([api] max_json_body_depth); no request needs that.'
                   % (what, api.max_json_body_depth))
    if bound is json_depth.Bound.VALUES:
        raise exception.InvalidParameterValue(
            reason='%s holds more than %d JSON values, object keys included '
                   '([api] max_json_body_values); send fewer, or raise '
                   'that option if a real request needs more.'
                   % (what, api.max_json_body_values))


def _decode(raw: bytes) -> Any:
    """Parse ``raw`` as JSON, refusing what the parser must never see."""
    _check_shape(raw, 'The request body')
    try:
        # JSON travels as UTF-8 (RFC 8259, section 8.1); Python would also
        # guess UTF-16 and UTF-32, which no client of Ironic sends.
        text = raw.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise exception.InvalidParameterValue(
            reason='The request body is not UTF-8 (byte %d); send JSON '
                   'encoded as UTF-8.' % exc.start) from exc
    if text.startswith('\ufeff'):
        raise exception.InvalidParameterValue(
            reason='The request body starts with a byte order mark; send '
                   'JSON encoded as UTF-8 without one.')
    try:
        return json.loads(text)
    except RecursionError:  # the depth scan should have caught it
        raise exception.InvalidParameterValue(
            reason='The request body is nested too deeply.') from None
    except ValueError as exc:
        raise exception.InvalidParameterValue(
            reason='The request body is not valid JSON: %s' % exc) from exc


class BodyTooLarge(exception.FerrumException):
    msg_fmt = ('The request body is larger than %(limit)d KiB ([api] '
               '%(option)s); it was not read.')
    code = 413


def _size_limit() -> tuple[int, str]:
    """(bytes, option) of the body size limit of this request."""
    option = ('max_json_body_size_provision'
              if flask.request.path.rstrip('/').endswith('/states/provision')
              else 'max_json_body_size')
    return getattr(services.conf().api, option) * 1024, option


def limit_size() -> None:
    """Refuse a body whose Content-Length is over the limit, unread."""
    limit, option = _size_limit()
    length = flask.request.content_length
    if length is not None and length > limit:
        raise BodyTooLarge(limit=limit // 1024, option=option)


def _read() -> bytes:
    """The body, read once and never past the limit (a chunked body has
    no Content-Length to check beforehand)."""
    raw: bytes | None = flask.g.get(errors.BODY_READ)
    if raw is not None:
        return raw
    limit, option = _size_limit()
    if flask.request.content_length is None and not flask.request.headers.get(
            'Transfer-Encoding'):
        raw = b''
    else:
        raw = flask.request.stream.read(limit + 1)
    if len(raw) > limit:
        raise BodyTooLarge(limit=limit // 1024, option=option)
    setattr(flask.g, errors.BODY_READ, raw)
    return raw


def json_body(schema: dict[str, Any] | None = None) -> Any:
    """The request's JSON body, validated against ``schema`` if given."""
    raw = _read()
    if not raw.strip():
        document: Any = None
    else:
        _check_media_type()
        document = _decode(raw)
        try:
            # "\ud800" is valid JSON but no valid text: nothing can store it.
            text = json.dumps(document, ensure_ascii=False)
            text.encode('utf-8')
        except ValueError as exc:
            raise exception.InvalidParameterValue(
                reason='The request body is not valid JSON: %s' % exc) from exc
        if '\\u0000' in text:
            raise exception.InvalidParameterValue(
                reason='The request body contains a NUL character (\\u0000); '
                       'no field accepts one.')
    if schema is not None:
        if document is None:
            raise exception.InvalidParameterValue(
                reason='This request needs a JSON body.')
        validate(document, schema, 'request body')
    return document


def existing_root(document: Mapping[str, Any], path: str) -> str:
    """The field a patch ``path`` names, which must be one of
    ``document``'s (400 otherwise, as Ironic's)."""
    root = path.split('/')[1]
    if microversion.at_least(98):
        # RFC 6901's escapes in the field's name, as Ironic from 1.98;
        # deeper keys holding "~" or "/" are jsonpatch's at every version.
        root = root.replace('~1', '/').replace('~0', '~')
    if root not in document:
        raise exception.InvalidParameterValue(
            reason='Adding a new attribute (/%s) to the root of the '
                   'resource is not allowed.' % root)
    return root


def apply_patch(document: dict[str, Any], patch: Any) -> dict[str, Any]:
    """``document`` with the JSON Patch ``patch`` applied (a new dict)."""
    validate(patch, PATCH_SCHEMA, 'JSON Patch')
    for operation in patch:
        if operation['op'] != 'remove' and 'value' not in operation:
            raise exception.InvalidParameterValue(
                reason='The "%s" operation on %s needs a "value".'
                       % (operation['op'], operation['path']))
        existing_root(document, operation['path'])
    try:
        patched: dict[str, Any] = jsonpatch.apply_patch(
            copy.deepcopy(document), patch)
    except (jsonpatch.JsonPatchException,
            jsonpatch.JsonPointerException) as exc:
        raise exception.InvalidParameterValue(
            reason='The JSON Patch cannot be applied: %s' % exc) from exc
    return patched


def patch_changes(document: dict[str, Any], patch: Any,
                  updatable: frozenset[str], hint: str) -> dict[str, Any]:
    """Top-level fields ``patch`` changes in ``document``, by new value.

    :param hint: completes the 400 for a field outside ``updatable``.
    """
    patched = apply_patch(document, patch)
    changes = {name: patched.get(name) for name in document
               if patched.get(name) != document[name]}
    # Each PATCH may add a value as deep as the body limit under a path
    # that is deep already, or as many values as the body limit beside
    # those a field has: bound the result too, or forty PATCHes would
    # store a document no JSON encoder can render, and the update (which
    # carries whole fields to the conductor) would outgrow what JSON-RPC
    # accepts.
    _check_shape(json.dumps(changes).encode(),
                'The result of this patch (the fields it changes)')
    read_only = sorted(set(changes) - updatable)
    if read_only:
        raise exception.InvalidParameterValue(
            reason="'/%s' is a read-only attribute and cannot be updated "
                   "with PATCH; %s" % (read_only[0], hint))
    return changes
