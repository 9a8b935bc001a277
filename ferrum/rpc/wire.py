# SPDX-License-Identifier: Apache-2.0
"""What crosses the JSON-RPC wire: objects as dicts, errors as their parts.

Nodes and allocations travel as their columns (datetimes in ISO 8601) and
are rebuilt on the API side as the same :class:`~ferrum.objects.node.Node`
and :class:`~ferrum.objects.allocation.Allocation` the ``local`` transport
returns, bound to the API's database. A ferrum exception travels as its
class name, ``code``, message and keyword arguments and is raised again on
the API side as that class, so the API answers with the same status.
"""

import datetime
import json
import logging
from typing import Any

from ferrum.common import exception
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj

LOG = logging.getLogger(__name__)

#: The key marking an encoded object in a result.
OBJECT_KEY = 'ferrum_object'
#: JSON-RPC 2.0 error code for a ferrum exception (server-defined range).
FERRUM_ERROR = -32000


def _default(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(
            value)
    # Exception kwargs may hold anything; their text is what a client sees.
    return str(value)


def dumps(document: Any) -> bytes:
    return json.dumps(document, default=_default).encode()


def encode_result(value: Any) -> Any:
    """A manager method's return value as JSON-ready data."""
    if isinstance(value, node_obj.Node):
        return {OBJECT_KEY: 'Node', 'data': value.as_dict()}
    if isinstance(value, allocation_obj.Allocation):
        data = {name: getattr(value, name) for name in allocation_obj.FIELDS}
        data.update(node_uuid=value.node_uuid, traits=list(value.traits))
        return {OBJECT_KEY: 'Allocation', 'data': data}
    return value


def _timestamps(data: dict[str, Any]) -> dict[str, Any]:
    return {key: (datetime.datetime.fromisoformat(value)
                  if key.endswith('_at') and isinstance(value, str)
                  else value)
            for key, value in data.items()}


def decode_result(db: Any, value: Any) -> Any:
    """The inverse of :func:`encode_result`, objects bound to ``db``."""
    if not isinstance(value, dict) or OBJECT_KEY not in value:
        return value
    data = _timestamps(value['data'])
    if value[OBJECT_KEY] == 'Node':
        return node_obj.Node(db, data)
    if value[OBJECT_KEY] == 'Allocation':
        traits = data.pop('traits', [])
        return allocation_obj.Allocation(db, data, traits)
    raise exception.FerrumException(
        'A conductor answered with an unknown object type %s.'
        % value[OBJECT_KEY])


def encode_error(exc: exception.FerrumException) -> dict[str, Any]:
    """A JSON-RPC error object for ``exc``."""
    return {'code': FERRUM_ERROR, 'message': str(exc),
            'data': {'class': type(exc).__name__, 'code': exc.code,
                     'kwargs': exc.kwargs}}


def _classes() -> dict[str, type[exception.FerrumException]]:
    """Every ferrum exception class by name (loaded modules only)."""
    found: dict[str, type[exception.FerrumException]] = {}
    pending: list[type[exception.FerrumException]] = [
        exception.FerrumException]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.__name__, cls)
        pending.extend(cls.__subclasses__())
    return found


def decode_error(error: dict[str, Any]) -> exception.FerrumException:
    """The exception a JSON-RPC error object stands for.

    The class of the same name when the API knows it, else a plain
    :class:`FerrumException`; either way with the conductor's message,
    keyword arguments and HTTP ``code``.
    """
    data = error.get('data') or {}
    message = str(error.get('message') or 'The conductor failed.')
    kwargs = data.get('kwargs') or {}
    cls = _classes().get(str(data.get('class')), exception.FerrumException)
    # Not cls(...): a subclass may take other constructor arguments; the
    # base constructor sets exactly what the API reads.
    exc = cls.__new__(cls)
    exception.FerrumException.__init__(exc, message, **kwargs)
    code = data.get('code')
    if isinstance(code, int) and code != exc.code:
        exc.code = code
    return exc
