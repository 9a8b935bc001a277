# SPDX-License-Identifier: Apache-2.0
"""Who asked for the work being done: the user (and the user's project) of
the API request it serves, for the ``user`` of the events it records
(Ironic's node history takes it from the request context the same way).

The API sets it for each request (:func:`ferrum.api.access.load_context`);
a JSON-RPC call carries it to the conductor (``context`` beside
``params``); a conductor's worker runs what a request started as asked by
the request's requester (:class:`ferrum.conductor.workers.WorkerPool`
takes it at submission). Periodic work has none.

A context variable set for a block and reset after it (:func:`acting_for`),
or for a request and cleared at its end: one request's user never stays
behind for the next piece of work in a thread.
"""

import contextlib
import contextvars
import dataclasses
from collections.abc import Iterator

#: Keystone ids are 64 characters at most, and the events columns hold
#: 255; a longer value is not an id.
MAX_LENGTH = 255


@dataclasses.dataclass(frozen=True)
class Requester:
    user_id: str | None = None
    project_id: str | None = None


_NOBODY = Requester()
_REQUESTER: contextvars.ContextVar[Requester] = contextvars.ContextVar(
    'ferrum_requester', default=_NOBODY)


def current() -> Requester:
    """Who asked (both ids None for work nobody asked for)."""
    return _REQUESTER.get()


def set_requester(user_id: object, project_id: object) -> None:
    """Make these the requester of what runs from here on in this context
    (an API request sets them at its start, and nobody at its end)."""
    _REQUESTER.set(_requester(user_id, project_id))


@contextlib.contextmanager
def acting_for(user_id: object, project_id: object) -> Iterator[None]:
    """Run the block as asked by them (a JSON-RPC call)."""
    token = _REQUESTER.set(_requester(user_id, project_id))
    try:
        yield
    finally:
        _REQUESTER.reset(token)


def _requester(user_id: object, project_id: object) -> Requester:
    user, project = _valid(user_id), _valid(project_id)
    return _NOBODY if user is None and project is None else Requester(
        user, project)


def _valid(value: object) -> str | None:
    if isinstance(value, str) and 0 < len(value) <= MAX_LENGTH:
        return value
    return None
