# SPDX-License-Identifier: Apache-2.0
"""Agent tokens: the secret a node's ramdisk agent proves itself with.

As Ironic's (``agent_secret_token``), and always required: the first
lookup of a node that waits for its agent is given a token, every later
lookup ``******``; a heartbeat must carry the token, and every command the
conductor sends the agent carries it too. The token is deleted when the
agent's work ends (deploy or cleaning done, power off, take-over), so the
next agent booted on the node gets a new one.

The token lives in ``agent_tokens``, apart from the node row: no node
view, history entry, event, metric or RPC answer can carry it, and issuing
it is one INSERT that only one lookup can win, so it needs no node lock (a
lookup arrives while the conductor still holds the lock to power the node
on, and an agent that got 409 would back off for 5 to 30 s).
"""

import hmac
import secrets

import sqlalchemy as sa
from oslo_db import exception as db_exc

from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

TABLE = models.table(models.AgentToken)
#: What lookups after the first get instead of the token (Ironic's).
MASK = '******'
_GET = sa.select(TABLE.c.token).where(TABLE.c.node_id == sa.bindparam('b_id'))
_DELETE = sa.delete(TABLE).where(TABLE.c.node_id == sa.bindparam('b_id'))


def issue(db: db_api.Database, node_id: int) -> str | None:
    """A new token for the node, or None when it has one already (or was
    deleted meanwhile)."""
    token = secrets.token_urlsafe(32)
    try:
        with db.writer() as conn:
            conn.execute(sa.insert(TABLE).values(
                node_id=node_id, token=token, created_at=base.utcnow()))
    except (db_exc.DBDuplicateEntry, db_exc.DBReferenceError):
        return None
    return token


def get(db: db_api.Database, node_id: int) -> str | None:
    """The node's token, for the commands the conductor sends its agent."""
    with db.reader() as conn:
        found: str | None = conn.execute(_GET, {'b_id': node_id}).scalar()
    return found


def matches(db: db_api.Database, node_id: int, given: str | None) -> bool:
    """Whether ``given`` is the node's token (compared in constant time)."""
    held = get(db, node_id)
    if held is None or not given:
        return False
    return hmac.compare_digest(held.encode(), given.encode())


def forget(db: db_api.Database, node_id: int) -> None:
    """Delete the node's token: its agent's work ended.

    Written at once, in a transaction of its own, not with the node's next
    save: the next agent may look the node up before that. Most nodes
    have no token (no agent looked them up: fake and out-of-band
    deploys, every power change): a read finds that, where a write
    transaction would, on SQLite, queue every other writer of the
    fleet. A lookup that issues a token just after the read is the
    lookup that would have come just after the delete.
    """
    if get(db, node_id) is None:
        return
    with db.writer() as conn:
        conn.execute(_DELETE, {'b_id': node_id})
