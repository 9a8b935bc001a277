# SPDX-License-Identifier: Apache-2.0
"""Who asked for the work being done: the user of the API request it
serves, for the ``user`` of the events it records (Ironic's node history
takes it from the request context the same way).

The API sets it for each request (:func:`ferrum.api.access.load_context`);
a JSON-RPC call carries it to the conductor (``context.user_id`` beside
``params``); a conductor's worker runs what a request started with the
request's user (:class:`ferrum.conductor.workers.WorkerPool` submits in
a copy of the submitting thread's context). Periodic work has none.

A context variable, not a thread-local: a worker thread runs each piece of
work in the context it was submitted from, so one request's user never
stays behind for the next piece of work in that thread.
"""

import contextlib
import contextvars
from collections.abc import Iterator

_USER: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    'ferrum_requesting_user', default=None)
#: Keystone user ids are 64 characters at most, and the events column
#: holds 255; a longer value is not a user id.
MAX_LENGTH = 255


def user() -> str | None:
    """The requesting user's id, None for work nobody asked for."""
    return _USER.get()


def set_user(user_id: str | None) -> None:
    """Make ``user_id`` the requesting user of what runs from here on in
    this context (an API request sets it at its start, and None at its
    end)."""
    _USER.set(_valid(user_id))


@contextlib.contextmanager
def acting_for(user_id: str | None) -> Iterator[None]:
    """Run the block as asked by ``user_id`` (a JSON-RPC call)."""
    token = _USER.set(_valid(user_id))
    try:
        yield
    finally:
        _USER.reset(token)


def _valid(user_id: object) -> str | None:
    if isinstance(user_id, str) and 0 < len(user_id) <= MAX_LENGTH:
        return user_id
    return None
