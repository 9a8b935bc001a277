# SPDX-License-Identifier: Apache-2.0
"""Clean-up of nodes a conductor left locked when it stopped or died.

Used at start-up (our own stale locks, after a crash), at graceful stop
(work that did not finish within ``graceful_shutdown_timeout``), and
periodically for conductors whose heartbeat stopped. A node
left in a transient state goes to that state's failure state, so an
operator sees what happened instead of a node that is stuck for ever.
"""

import logging
from collections.abc import Collection

import sqlalchemy as sa

from ferrum.common import plural
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.db import api as db_api
from ferrum.objects import base
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj
from ferrum.objects import node_history
from ferrum.periodic import decorators

LOG = logging.getLogger(__name__)
#: What the history entry of a failed node needs of it.
_HISTORY_COLUMNS = ('id', 'uuid', 'owner', 'lessee', 'provision_state',
                    'target_provision_state', 'provision_updated_at',
                    'last_error', 'maintenance', 'maintenance_reason',
                    'fault')


def fail_and_release(db: db_api.Database, host: str, why: str,
                     keep: Collection[int] = ()) -> int:
    """Fail transient nodes locked by ``host`` and clear its locks.

    :param keep: ids of nodes whose lock a live task holds: left alone.
    :returns: the number of locks cleared.
    """
    table = node_obj.TABLE
    now = base.utcnow()
    with db.writer() as conn:
        rows = [row for row in conn.execute(sa.select(
            *(table.c[name] for name in _HISTORY_COLUMNS)).where(
                table.c.reservation == host)).all() if row.id not in keep]
        for row in rows:
            values: dict[str, object] = {'reservation': None,
                                         'target_power_state': None}
            failed = states.STUCK_STATES_TREATED_AS_FAIL.get(
                row.provision_state)
            if failed is not None:
                error = ('Conductor %s %s while the node was in "%s"; retry '
                         'the operation.' % (host, why, row.provision_state))
                values.update(provision_state=failed, last_error=error,
                              target_provision_state=states.TARGETS.get(
                                  failed),
                              provision_updated_at=now, updated_at=now,
                              clean_step=None)
                if row.provision_state == states.CLEANING:
                    values.update(maintenance=True,
                                  fault=states.FAULT_CLEAN_FAILURE,
                                  maintenance_reason=error)
                LOG.error('Node %(node)s: %(error)s',
                          {'node': row.uuid, 'error': error})
            node_obj.Node.release(db, host, row.id, values,
                                  node_history.rows(dict(row._mapping), values,
                                                    db.history_host))
    return len(rows)


class DeadConductors:
    """Frees the nodes of conductors whose heartbeat stopped.

    Only a stopped heartbeat counts, not "offline": a conductor stopping
    gracefully is offline but still finishing the work it holds locks for.
    """

    @decorators.periodic(
        spacing=lambda conf: conf.conductor.check_provision_state_interval)
    def release_dead_conductor_locks(
            self, ctx: context_mod.ConductorContext) -> None:
        dead = conductor_obj.list_silent(
            ctx.db, ctx.conf.conductor.heartbeat_timeout)
        for other in dead:
            if other.hostname == ctx.host:
                continue
            cleared = fail_and_release(ctx.db, other.hostname,
                                       'stopped sending heartbeats')
            if cleared:
                LOG.warning('Cleared %(locks)s of dead conductor %(host)s',
                            {'locks': plural.count(cleared, 'node lock'),
                             'host': other.hostname})
