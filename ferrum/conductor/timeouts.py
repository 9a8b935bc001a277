# SPDX-License-Identifier: Apache-2.0
"""The periodic task that fails nodes waiting too long for their driver."""

import datetime
import logging
from typing import Any

from ferrum.common import plural
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import task_manager
from ferrum.drivers import base
from ferrum.periodic import decorators

LOG = logging.getLogger(__name__)
PURPOSE = 'callback timeout'

#: Each wait state, and the [conductor] option that bounds it.
_TIMEOUTS = {
    states.DEPLOYWAIT: 'deploy_callback_timeout',
    states.CLEANWAIT: 'clean_callback_timeout',
    states.INSPECTWAIT: 'inspect_wait_timeout',
}


class ProvisionTimeouts:
    """Fails nodes in a wait state past its timeout.

    ``wait call-back`` goes to ``deploy failed`` after the deploy
    interface's ``clean_up``; ``clean wait`` to ``clean failed`` after
    ``tear_down_cleaning``; ``inspect wait`` to ``inspect failed``.
    """

    @decorators.periodic(
        spacing=lambda conf: conf.conductor.check_provision_state_interval)
    def check_timeouts(self, ctx: context_mod.ConductorContext) -> None:
        timeouts = {state: ctx.conf.conductor[option]
                    for state, option in _TIMEOUTS.items()
                    if ctx.conf.conductor[option]}
        if not timeouts:
            return
        now = ctx.clock()

        def expired(row: Any) -> bool:
            limit = datetime.timedelta(seconds=timeouts[row.provision_state])
            return (row.provision_updated_at is not None
                    and row.provision_updated_at < now - limit)

        def fail(task: task_manager.Task) -> None:
            state = task.node.provision_state
            if state not in timeouts or not expired(task.node):
                return  # it moved on (or waits anew) since we looked
            error = ('Timeout reached while waiting in "%s" for %s '
                     '([conductor]%s)' % (
                         state, plural.count(timeouts[state], 'second'),
                         _TIMEOUTS[state]))
            # What the driver said it waits for (an agent's command...).
            awaited = task.node.driver_internal_info.get(base.AWAITING)
            if isinstance(awaited, str):
                error = '%s; awaited: %s' % (error, awaited)
            task.fail(error)

        # One query for every waiting state.
        ctx.each_node(PURPOSE, fail, columns=('provision_updated_at',),
                      filters={'provision_state_in': list(timeouts),
                               'reserved': False},
                      predicate=expired, shared=False)
