# SPDX-License-Identifier: Apache-2.0
"""The wipe at a lease's end: every node goes through automated cleaning
(its erase steps) before it is ``available`` to anyone else.

A node the lessee deployed is undeployed, and its tear-down cleans it. A
node that looks unused (``available``, no instance) is cleaned all the
same: the lessee may have written to its disks by other means, or
deployed and undeployed it before the end. The end starts that cleaning
itself, with ``manage`` and ``provide`` in one task (there is no
``available`` to ``cleaning`` transition), and marks the row ``wiped``;
the node goes back once it is ``available`` again, which a cleaning
reaches only by finishing. A cleaning that fails leaves the node in
maintenance, and the lease waits for it ("in maintenance").

The row is marked after the cleaning started, never before: a conductor
killed in between leaves a row not ``wiped`` whose node is cleaning, and
the next pass cleans it once more when it is back (one cleaning too many,
never one too few).

Not cleaned, as before: a node whose automated cleaning is off
(``ferrum.drivers.base.automated_clean_enabled``: the node's
``automated_clean``, else ``[conductor] automated_clean``), and a node
that passes on to the project's next lease (same tenant, nothing to
erase between them).
"""

import logging
from collections.abc import Mapping, Sequence

from oslo_config import cfg

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import context as context_mod
from ferrum.conductor import provisioning
from ferrum.conductor import task_manager
from ferrum.objects import lease as lease_obj
from ferrum.objects import node_history
from ferrum.objects.lease import ends as lease_ends
from ferrum.objects.lease import nodes as lease_nodes

LOG = logging.getLogger(__name__)


def needed(conf: cfg.ConfigOpts, row: lease_nodes.LeaseNodeRow) -> bool:
    """The node must be cleaned before it goes back: the end has not
    started its cleaning yet, and automated cleaning is on for it (as
    :func:`ferrum.drivers.base.automated_clean_enabled` decides, from the
    row instead of a task)."""
    if row.wiped:
        return False
    if row.automated_clean is not None:
        return bool(row.automated_clean)
    return bool(conf.conductor.automated_clean)


def start_all(ctx: context_mod.ConductorContext,
              leases: Mapping[int, lease_obj.Lease],
              rows: Sequence[lease_nodes.LeaseNodeRow]
              ) -> list[tuple[lease_nodes.LeaseNodeRow, str]]:
    """Start cleaning the free nodes of ``rows`` (of ``leases``, by id),
    then mark the rows whose cleaning started, in one transaction.

    :returns: each row with what its lease waits for.
    """
    waits = []
    started = []
    for row in rows:
        try:
            if _start(ctx, leases[row.lease_id], row):
                started.append(row.id)
                waits.append((row, 'node %s, being cleaned' % row.node_uuid))
            else:
                # Read before the lock: the next pass decides anew.
                waits.append((row, 'node %s, which changed meanwhile'
                               % row.node_uuid))
        except exception.FerrumException as exc:
            # Locked, or no worker free: the node is as it was, and the
            # next pass tries again.
            waits.append((row, 'node %s: %s' % (row.node_uuid, exc)))
    lease_ends.mark_wiped(ctx.db, started)
    return waits


def _start(ctx: context_mod.ConductorContext, lease: lease_obj.Lease,
           row: lease_nodes.LeaseNodeRow) -> bool:
    """Start cleaning the node of ``row``, if it is still free."""
    with task_manager.acquire(ctx, row.node_id,
                              purpose='cleaning for the end of a lease'
                              ) as task:
        node = task.node
        if (node.provision_state != states.AVAILABLE or node.maintenance
                or node.instance_uuid or node.allocation_id):
            return False
        # Written with the move to cleaning: the feed names the lease
        # before the steps its end runs (each names it too,
        # lease_ends.cleaning_for).
        node.note(node_history.note(
            node_history.LEASE, 'Cleaning for the end of lease %s of '
            'project %s' % (lease.uuid, lease.project),
            lease_uuid=lease.uuid, lessee=lease.project))
        provisioning.start(task, 'manage', {})
        provisioning.start(task, 'provide', {})
    LOG.info('Lease %(lease)s: cleaning node %(node)s before it goes back',
             {'lease': lease.uuid, 'node': row.node_uuid})
    return True
