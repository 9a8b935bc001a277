# SPDX-License-Identifier: Apache-2.0
"""The three dynamic-allocation periodic tasks of the spec.

* **taken**: available nodes whose hardware a OneView user took go to
  maintenance (reason :data:`allocation.MAINTENANCE_REASON`) and manageable.
* **freed**: nodes this driver put there whose hardware is free again leave
  maintenance and are provided, so they are cleaned before anyone gets them
  (OneView does not wipe disks).
* **clean failed**: nodes whose cleaning could not start because OneView had
  the hardware (the race of a deploy against a OneView user) go to
  maintenance and manageable, where *freed* picks them up.

A run lists the server hardware once, ``[oneview] page_size`` per request,
and matches nodes by URI: the cost is the number of pages, not of nodes.
A run with no candidate node asks OneView nothing. Each node is then handled
under its own lock after checking again that it is still in the state the
list showed, and one node failing is logged and skipped: it never ends the
run. When OneView cannot be listed, the run changes nothing.

A profile named for its node (:func:`driver_info.named_for`) is ferrum's
even when the node did not record it (an apply interrupted by a crash):
*taken* reads the name of such a profile when the node says an apply was
under way, and leaves the node alone.

Nodes are put in maintenance by this driver only with both the reason and
the ``driver_internal_info`` flag :data:`allocation.IN_USE_FLAG`; *freed*
acts only on nodes that have both, never on nodes an operator put there.
"""

import logging
from collections.abc import Callable
from typing import Any

from oslo_config import cfg

from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers.oneview import allocation
from ferrum.drivers.oneview import client as client_mod
from ferrum.drivers.oneview import driver_info
from ferrum.drivers.oneview import errors

LOG = logging.getLogger(__name__)

HARDWARE_TYPE = 'oneview'
_COLUMNS = ('id', 'uuid', 'driver', 'provision_state', 'maintenance',
            'maintenance_reason', 'driver_info', 'driver_internal_info')


def spacing(conf: cfg.ConfigOpts) -> float:
    """Seconds between runs; 0 (disabled) unless periodic tasks are on."""
    if not conf.oneview.enable_periodic_tasks:
        return 0
    return float(conf.oneview.periodic_check_interval)


class _Run:
    """One run of a periodic task: OneView's hardware, listed once.

    The listing is read when the first candidate node needs it, so a run
    with no candidate asks OneView nothing; when it fails, the run changes
    nothing and says so once.
    """

    def __init__(self, ctx: base.ConductorView, purpose: str) -> None:
        self.ctx = ctx
        self.purpose = purpose
        self.changed = 0
        self._listed = False
        self._hardware: dict[str, dict[str, Any]] | None = None

    def hardware(self) -> dict[str, dict[str, Any]] | None:
        """All server hardware by URI, or None (logged) when OneView failed."""
        if not self._listed:
            self._listed = True
            try:
                ov = client_mod.get_client(self.ctx.conf)
                listed = ov.list_server_hardware(
                    self.ctx.conf.oneview.page_size)
            except errors.OneViewError as exc:
                LOG.error('OneView periodic task "%(purpose)s" skipped this '
                          'run: %(error)s',
                          {'purpose': self.purpose, 'error': exc})
            else:
                self._hardware = {str(item.get('uri')): item
                                  for item in listed}
        return self._hardware

    def found(self, row_or_node: Any, report: bool = True
              ) -> dict[str, Any] | None:
        """The listed hardware of a node; None (logged) when not listed."""
        uri = (row_or_node.driver_info or {}).get(driver_info.HARDWARE_URI)
        found = (self.hardware() or {}).get(str(uri))
        if found is None and report and self.hardware() is not None:
            LOG.warning('Node %(node)s: server hardware %(hw)s is not in '
                        'OneView; %(purpose)s skips it',
                        {'node': row_or_node.uuid, 'hw': uri,
                         'purpose': self.purpose})
        return found

    def each(self, filters: dict[str, Any],
             predicate: Callable[[Any], bool] | None,
             act: Callable[[base.Task, dict[str, Any] | None], None],
             with_hardware: bool = True) -> int:
        """``act`` on each matching node under its exclusive lock (the one
        policy of ``ctx.each_node``); returns how many changed state."""
        def wanted(row: Any) -> bool:
            # Decided on the listed data, before any lock: hardware OneView
            # does not list is reported here and never locked.
            if predicate is not None and not predicate(row):
                return False
            return not with_hardware or self.found(row) is not None

        def visit(task: base.Task) -> None:
            found = None
            if with_hardware:
                found = self.found(task.node, report=False)
                if found is None:
                    return  # its URI changed since the row was read
            before = task.node.provision_state
            act(task, found)
            self.changed += task.node.provision_state != before

        self.ctx.each_node(self.purpose, visit, columns=_COLUMNS,
                           filters=dict(filters, driver=HARDWARE_TYPE),
                           predicate=wanted, shared=False)
        return self.changed


def _owner(row_or_node: Any, hardware: dict[str, Any]) -> str:
    return driver_info.ownership(
        hardware.get('serverProfileUri'),
        (row_or_node.driver_info or {}).get(driver_info.APPLIED_PROFILE_URI))


def _marked_by_us(row_or_node: Any) -> bool:
    return bool(row_or_node.maintenance
                and row_or_node.maintenance_reason
                == allocation.MAINTENANCE_REASON
                and (row_or_node.driver_internal_info or {}).get(
                    allocation.IN_USE_FLAG))


# ---- taken by OneView while available -----------------------------------

_TAKEN = 'OneView check for hardware taken while available'


def _mark_taken(task: base.Task,
                hardware: dict[str, Any] | None) -> None:
    node = task.node
    if (hardware is None or node.provision_state != states.AVAILABLE
            or node.maintenance or _owner(node, hardware)
            != driver_info.ONEVIEW):
        return  # changed since the list was read
    if (node.driver_internal_info.get(driver_info.APPLYING)
            and allocation.owner(task, hardware, allocation.client_for(
                task)) != driver_info.ONEVIEW):
        # An apply of ferrum's was interrupted: the profile is named for
        # this node (now recorded), not a OneView user's. Only such nodes
        # cost a request, so a run stays at one listing.
        return
    LOG.warning('Node %(node)s: OneView has its server hardware %(hw)s '
                '(profile %(profile)s); moving it to maintenance and '
                'manageable', {'node': node.uuid, 'hw': hardware.get('uri'),
                               'profile': hardware.get('serverProfileUri')})
    _set_in_use(task)
    task.process_event('manage')


def _set_in_use(task: base.Task) -> None:
    task.node.maintenance = True
    task.node.maintenance_reason = allocation.MAINTENANCE_REASON
    task.node.fault = None
    info = dict(task.node.driver_internal_info)
    info[allocation.IN_USE_FLAG] = True
    info.pop(allocation.ALLOCATION_ERROR, None)
    task.node.driver_internal_info = info


def check_nodes_taken_by_oneview(ctx: base.ConductorView) -> int:
    """Available nodes whose hardware OneView took: maintenance, manageable.

    :returns: how many nodes were moved.
    """
    run = _Run(ctx, _TAKEN)

    def taken(row: Any) -> bool:
        # Most available nodes are not taken: decide on the listed data
        # first and lock only the nodes that change (the lock re-checks).
        found = run.found(row, report=False)
        return found is None or _owner(row, found) == driver_info.ONEVIEW

    return run.each({'provision_state': states.AVAILABLE,
                     'maintenance': False}, taken, _mark_taken)


# ---- freed by OneView ------------------------------------------------------

_FREED = 'OneView check for hardware freed'


def _provide_freed(task: base.Task,
                   hardware: dict[str, Any] | None) -> None:
    node = task.node
    if (hardware is None or node.provision_state != states.MANAGEABLE
            or not _marked_by_us(node)
            or _owner(node, hardware) == driver_info.ONEVIEW):
        return
    LOG.info('Node %(node)s: OneView freed server hardware %(hw)s; taking '
             'the node out of maintenance and cleaning it',
             {'node': node.uuid, 'hw': hardware.get('uri')})
    node.maintenance = False
    node.maintenance_reason = None
    node.fault = None
    info = dict(node.driver_internal_info)
    info.pop(allocation.IN_USE_FLAG, None)
    node.driver_internal_info = info
    # The verb an operator would use: when no worker is free, the conductor
    # puts the node back as it was (still marked) for the next run.
    task.start('provide')


def check_nodes_freed_by_oneview(ctx: base.ConductorView) -> int:
    """Nodes this driver put in maintenance whose hardware is free again:
    out of maintenance, then provided (cleaned, then available).

    :returns: how many nodes were provided.
    """
    return _Run(ctx, _FREED).each(
        {'provision_state': states.MANAGEABLE, 'maintenance': True},
        _marked_by_us, _provide_freed)


# ---- clean failed because OneView had the hardware --------------------------

_CLEANFAIL = 'OneView check for cleaning failed on hardware taken'


def _failed_on_taken(row_or_node: Any) -> bool:
    return bool((row_or_node.driver_internal_info or {}).get(
        allocation.ALLOCATION_ERROR) == allocation.ALLOCATION_ERROR_VALUE)


def _manage_clean_failed(task: base.Task,
                         _hardware: dict[str, Any] | None) -> None:
    node = task.node
    if node.provision_state != states.CLEANFAIL or not _failed_on_taken(node):
        return
    LOG.warning('Node %(node)s: cleaning failed because OneView has its '
                'server hardware; moving it to maintenance and manageable '
                'until OneView frees it', {'node': node.uuid})
    _set_in_use(task)
    task.process_event('manage')


def check_nodes_taken_on_cleanfail(ctx: base.ConductorView) -> int:
    """Nodes in clean failed because OneView had the hardware: maintenance,
    manageable. Reads only the database.

    :returns: how many nodes were moved.
    """
    return _Run(ctx, _CLEANFAIL).each(
        {'provision_state': states.CLEANFAIL}, _failed_on_taken,
        _manage_clean_failed, with_hardware=False)
