# SPDX-License-Identifier: Apache-2.0
"""Request bodies: JSON parsing, JSON Schema validation and JSON Patch.

Every problem with a body is a 400 whose message says which part of the
body is wrong and what was expected, never a 500.
"""

import copy
import json
from typing import Any

import flask
import jsonpatch
import jsonschema

from ferrum.common import exception

#: A JSON Patch document as Ironic accepts it: add, replace and remove only.
PATCH_SCHEMA: dict[str, Any] = {
    'type': 'array',
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


def validate(document: Any, schema: dict[str, Any], what: str) -> None:
    """Raise InvalidParameterValue naming the first problem in ``document``."""
    validator = _validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is not None:
        raise exception.InvalidParameterValue(
            reason='Invalid %s%s: %s' % (what, _where(error), error.message))


def json_body(schema: dict[str, Any] | None = None) -> Any:
    """The request's JSON body, validated against ``schema`` if given."""
    raw = flask.request.get_data(cache=True)
    if not raw.strip():
        document: Any = None
    else:
        try:
            document = flask.json.loads(raw)
            # "\ud800" is valid JSON but no valid text: nothing can store it.
            text = json.dumps(document, ensure_ascii=False)
            text.encode('utf-8')
        except ValueError as exc:
            raise exception.InvalidParameterValue(
                reason='The request body is not valid JSON: %s' % exc)
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


def apply_patch(document: dict[str, Any], patch: Any) -> dict[str, Any]:
    """``document`` with the JSON Patch ``patch`` applied (a new dict)."""
    validate(patch, PATCH_SCHEMA, 'JSON Patch')
    for operation in patch:
        if operation['op'] != 'remove' and 'value' not in operation:
            raise exception.InvalidParameterValue(
                reason='The "%s" operation on %s needs a "value".'
                       % (operation['op'], operation['path']))
        root = operation['path'].split('/')[1]
        if root not in document:
            raise exception.InvalidParameterValue(
                reason='Adding a new attribute (/%s) to the root of the '
                       'resource is not allowed.' % root)
    try:
        patched: dict[str, Any] = jsonpatch.apply_patch(
            copy.deepcopy(document), patch)
    except (jsonpatch.JsonPatchException,
            jsonpatch.JsonPointerException) as exc:
        raise exception.InvalidParameterValue(
            reason='The JSON Patch cannot be applied: %s' % exc)
    return patched


def patch_changes(document: dict[str, Any], patch: Any,
                  updatable: frozenset[str], hint: str) -> dict[str, Any]:
    """Top-level fields ``patch`` changes in ``document``, by new value.

    :param hint: completes the 400 for a field outside ``updatable``.
    """
    patched = apply_patch(document, patch)
    changes = {name: patched.get(name) for name in document
               if patched.get(name) != document[name]}
    read_only = sorted(set(changes) - updatable)
    if read_only:
        raise exception.InvalidParameterValue(
            reason="'/%s' is a read-only attribute and cannot be updated "
                   "with PATCH; %s" % (read_only[0], hint))
    return changes
