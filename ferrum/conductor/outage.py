# SPDX-License-Identifier: Apache-2.0
"""Putting things right once the database answers again after an outage.

While the database is unreachable every request is refused with 503 and
changes nothing, but work that was already under way can end with nowhere
to write its result: a task whose lock release failed, a lock whose
UPDATE committed although the answer was lost, an allocation whose worker
could neither take a node nor mark the failure. :func:`recover` runs on the
heartbeat thread at the first beat that succeeds after a failed one (and
whenever a release is pending) and leaves nothing locked or
``allocating`` that no live thread works on:

1. the last changes of tasks whose release failed are written, with
   their history entries, so a node whose deploy finished during the
   outage ends ``active`` and its history says when it got there;
2. locks of this conductor that no live task holds (those tasks' locks
   included) are cleared, and a node left in a transient state goes to its
   failure state, as after a crash (see :mod:`ferrum.conductor.recovery`);
3. this conductor's ``allocating`` allocations that no worker processes
   are resumed.
"""

import logging

from ferrum.allocation import takeover
from ferrum.common import exception
from ferrum.common import plural
from ferrum.conductor import context as context_mod
from ferrum.conductor import recovery
from ferrum.objects import node as node_obj

LOG = logging.getLogger(__name__)


def recover(ctx: context_mod.ConductorContext) -> bool:
    """Free what the outage left behind; True when all of it is done.

    :raises DatabaseUnavailable: the database went away again; the next
        heartbeat calls this again.
    """
    for node_id, (node_uuid, changes, history) in (
            ctx.inflight.unreleased().items()):
        # The lock stays until step 2, which also fails the node if the
        # task's work was cut short in a transient state.
        node_obj.Node.write_if_held(ctx.db, ctx.host, node_id, changes,
                                    history)
        ctx.inflight.lock_released(node_id)
        LOG.info('Node %s: changes written after the database came back',
                 node_uuid)
    live = ctx.inflight.live_locks()
    if live is None:
        return False  # a lock is being taken right now: look again later
    cleared = recovery.fail_and_release(
        ctx.db, ctx.host, 'lost its database connection', keep=live)
    if cleared:
        LOG.warning('Cleared %s left by failed database writes',
                    plural.count(cleared, 'node lock'))
    takeover.resume_own(ctx, skip=ctx.inflight.allocations())
    return True


def recover_quietly(ctx: context_mod.ConductorContext) -> bool:
    """:func:`recover`, logging instead of raising; True when done."""
    try:
        return recover(ctx)
    except exception.DatabaseUnavailable as exc:
        LOG.warning('Recovery after the database outage deferred: %s', exc)
    except Exception:
        LOG.exception('Recovery after the database outage failed; it is '
                      'tried again at the next heartbeat')
    return False
