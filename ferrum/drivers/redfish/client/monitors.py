# SPDX-License-Identifier: Apache-2.0
"""Reading Redfish task monitors (part of
:mod:`ferrum.drivers.redfish.client`, the package that talks to sushy).

sushy's resources drop the answer of most PATCHes and actions, and its
TaskMonitor.wait() sleeps on the caller's thread; these keep the answer so
that a 202 becomes a wait of the node (:mod:`ferrum.drivers.redfish.tasks`).
"""

import dataclasses
from typing import Any

from sushy import taskmonitor


@dataclasses.dataclass(frozen=True)
class TaskReport:
    """One read of a task monitor, in Redfish's words.

    ``processing``: the monitor still answers 202. ``state``/``status``:
    the Task's ``TaskState``/``TaskStatus`` when the answer held a Task
    (None otherwise: the operation's own answer, e.g. 204, means it is
    done). ``retry_after``: the seconds the BMC asked to wait before the
    next read, None when it did not say.
    """

    processing: bool
    state: str | None = None
    status: str | None = None
    messages: tuple[str, ...] = ()
    retry_after: float | None = None


def send(resource: Any, method: str, data: dict[str, Any],
         path: str | None = None) -> str | None:
    """PATCH or POST ``data`` to a sushy resource (by default its own
    path), for a function given to :func:`call`.

    :returns: the URI of the task monitor when the BMC answered 202 (the
        operation goes on there), None when it answered that it is done.
    """
    target = path or resource.path
    # sushy keeps the connector private; its resources use it this way too.
    connector = resource._conn
    if method == 'PATCH':
        response = connector.patch(target, data=data)
    else:
        response = connector.post(target, data=data)
    if response.status_code != 202:
        return None
    monitor = taskmonitor.TaskMonitor.from_response(connector, response,
                                                    target)
    return str(monitor.task_monitor_uri)


def messages(doc: dict[str, Any]) -> tuple[str, ...]:
    found = []
    for message in doc.get('Messages') or ():
        if not isinstance(message, dict):
            continue
        text = message.get('Message') or ' '.join(
            [str(message.get('MessageId') or 'no message')]
            + [str(arg) for arg in message.get('MessageArgs') or ()])
        found.append(' '.join(str(text).split())[:300])
    return tuple(found)


def report(monitor: Any) -> TaskReport:
    response = monitor.response
    try:
        doc = response.json() if response.content else {}
    except ValueError:
        doc = {}
    doc = doc if isinstance(doc, dict) and 'TaskState' in doc else {}
    retry_after = None
    if response.headers.get('Retry-After') is not None:
        try:
            retry_after = float(monitor.sleep_for)
        except (TypeError, ValueError, OverflowError):
            pass  # neither seconds nor an HTTP date: use our own interval
    return TaskReport(processing=bool(monitor.is_processing),
                      state=doc.get('TaskState'), status=doc.get('TaskStatus'),
                      messages=messages(doc), retry_after=retry_after)
