# SPDX-License-Identifier: Apache-2.0
"""The periodic task that fails nodes waiting too long for a callback."""

import datetime
import logging

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import cleaning
from ferrum.conductor import context as context_mod
from ferrum.conductor import ownership
from ferrum.conductor import task_manager
from ferrum.periodic import decorators

LOG = logging.getLogger(__name__)

_TIMEOUTS = {
    states.DEPLOYWAIT: 'deploy_callback_timeout',
    states.CLEANWAIT: 'clean_callback_timeout',
}


class ProvisionTimeouts:
    """Fails ``wait call-back`` and ``clean wait`` nodes past their timeout."""

    @decorators.periodic(
        spacing=lambda conf: conf.conductor.check_provision_state_interval)
    def check_timeouts(self, ctx: context_mod.ConductorContext) -> None:
        timeouts = {state: ctx.conf.conductor[option]
                    for state, option in _TIMEOUTS.items()
                    if ctx.conf.conductor[option]}
        if not timeouts:
            return
        # One query for every waiting state.
        rows = ownership.node_rows(
            ctx, ['id', 'provision_state', 'provision_updated_at'],
            filters={'provision_state_in': list(timeouts), 'reserved': False})
        now = ctx.clock()
        for row in rows:
            state, timeout = row.provision_state, timeouts[row.provision_state]
            if (row.provision_updated_at is not None
                    and row.provision_updated_at
                    < now - datetime.timedelta(seconds=timeout)):
                self._fail(ctx, row.id, state, _TIMEOUTS[state], timeout)

    def _fail(self, ctx: context_mod.ConductorContext, node_id: int,
              state: str, option: str, timeout: int) -> None:
        try:
            with task_manager.acquire(ctx, node_id, retry=False,
                                      purpose='callback timeout') as task:
                if task.node.provision_state != state:
                    return  # it moved on while we looked
                error = ('Timeout reached while waiting in "%s" for %d '
                         'seconds ([conductor]%s)' % (state, timeout, option))
                if state == states.CLEANWAIT:
                    task.spawn_after(cleaning.fail_cleaning, task, error)
                else:
                    task.process_event('fail', last_error=error)
        except (exception.NodeLocked, exception.NodeNotFound):
            pass
        except exception.TemporaryFailure as exc:
            LOG.warning('Node %(node)s: cannot fail it on timeout yet: '
                        '%(error)s', {'node': node_id, 'error': exc})
