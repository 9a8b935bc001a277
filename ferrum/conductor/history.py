# SPDX-License-Identifier: Apache-2.0
"""The periodic cleanup of node history and events.

Every ``[conductor] node_history_cleanup_interval`` seconds each conductor
deletes what is no longer kept (:func:`ferrum.objects.event.prune`): a
node's entries beyond ``node_history_max_entries`` that are older than
``node_history_minimum_days``, and events of no node older than
``event_retention_days``, at most ``node_history_cleanup_batch_count`` a
run. The counting is read outside any write transaction and each node's
entries are deleted in a short one of their own, so that on SQLite the
other writers never wait for the whole cleanup. Two conductors pruning at
once delete each row once (a DELETE of a row already gone deletes
nothing), so no coordination is needed.
"""

import logging

from ferrum.common import plural
from ferrum.conductor import context as context_mod
from ferrum.objects import event as event_obj
from ferrum.periodic import decorators

LOG = logging.getLogger(__name__)


class HistoryCleanup:
    """The periodic task that bounds the history."""

    @decorators.periodic(
        spacing=lambda conf: conf.conductor.node_history_cleanup_interval)
    def prune_history(self, ctx: context_mod.ConductorContext) -> None:
        conf = ctx.conf.conductor
        deleted = event_obj.prune(
            ctx.db, max_entries=conf.node_history_max_entries,
            minimum_days=conf.node_history_minimum_days,
            retention_days=conf.event_retention_days,
            batch=conf.node_history_cleanup_batch_count, now=ctx.clock())
        if deleted:
            LOG.info('History cleanup deleted %s',
                     plural.count(deleted, 'entry', 'entries'))
