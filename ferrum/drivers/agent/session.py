# SPDX-License-Identifier: Apache-2.0
"""What ferrum knows of the agent running on a node: its session.

A session starts at the agent's first lookup, which issues the node's
token (:mod:`ferrum.objects.agent_token`), and is pinned by the first
heartbeat that carries the token: its ``callback_url`` and
``agent_verify_ca`` are recorded in the node's ``driver_internal_info``
(``agent_url``, ``agent_verify_ca``, ``agent_version``, Ironic's keys).
Every command then goes to that URL, over TLS verified with that CA, with
that token. A heartbeat from another URL or with another certificate is
refused, as Ironic refuses it.

This module imports no HTTP client: the conductor's flows end sessions
(:func:`forget`) on every node, agent or not, and a conductor without
an agent deploy loads nothing more for it. Reaching the agent is
:func:`ferrum.drivers.agent.progress.endpoint`.

The session ends when the agent's work does (deploy or cleaning done or
failed, power off, take-over): :func:`forget` deletes the token and the
record, so the next agent booted on the node looks it up anew.
"""

from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.objects import agent_token

if TYPE_CHECKING:
    from ferrum.drivers.task import AnyTask

URL = 'agent_url'
CA = 'agent_verify_ca'
VERSION = 'agent_version'
#: Every key of the record, dropped together by :func:`forget`.
KEYS = (URL, CA, VERSION)


def recorded_url(info: dict[str, Any]) -> str | None:
    found = info.get(URL)
    return found if isinstance(found, str) else None


def check(info: dict[str, Any], callback_url: str,
          verify_ca: str | None) -> bool:
    """Whether a heartbeat comes from the recorded agent; False when none
    is recorded yet.

    :raises InvalidParameterValue: another URL or certificate than the
        recorded ones.
    """
    url = recorded_url(info)
    if url is None:
        return False
    if url != callback_url:
        raise exception.InvalidParameterValue(reason=(
            'The heartbeat\'s callback_url %s is not the agent\'s recorded '
            'one, %s; an agent that moved must be rebooted to look its '
            'node up again.' % (callback_url[:200], url)))
    if (info.get(CA) or None) != (verify_ca or None):
        raise exception.InvalidParameterValue(reason=(
            'The heartbeat\'s agent_verify_ca is not the certificate the '
            'agent announced first; reboot the node into the agent.'))
    return True


def record(task: 'AnyTask', callback_url: str, version: str | None,
           verify_ca: str | None) -> None:
    """Pin the session to the heartbeat that carried the token (exclusive
    lock)."""
    info = dict(task.node.driver_internal_info)
    info[URL] = callback_url
    info[VERSION] = version
    if verify_ca:
        info[CA] = verify_ca
    else:
        info.pop(CA, None)
    task.node.driver_internal_info = info


def forget(task: 'AnyTask') -> None:
    """End the session: the token (at once) and the record (with the
    node's next save) go."""
    agent_token.forget(task.ctx.db, task.node.id)
    info = task.node.driver_internal_info
    if any(key in info for key in KEYS):
        task.node.driver_internal_info = {
            key: value for key, value in info.items() if key not in KEYS}
