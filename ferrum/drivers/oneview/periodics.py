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

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import cleaning
from ferrum.conductor import context as context_mod
from ferrum.conductor import ownership
from ferrum.conductor import task_manager
from ferrum.drivers.oneview import allocation
from ferrum.drivers.oneview import client as client_mod
from ferrum.drivers.oneview import driver_info

LOG = logging.getLogger(__name__)

HARDWARE_TYPE = 'oneview'
_COLUMNS = ('id', 'uuid', 'driver', 'provision_state', 'maintenance',
            'maintenance_reason', 'driver_info', 'driver_internal_info')


def spacing(conf: cfg.ConfigOpts) -> float:
    """Seconds between runs; 0 (disabled) unless periodic tasks are on."""
    if not conf.oneview.enable_periodic_tasks:
        return 0
    return float(conf.oneview.periodic_check_interval)


def _candidates(ctx: context_mod.ConductorContext,
                filters: dict[str, Any],
                predicate: Callable[[Any], bool] | None = None) -> list[Any]:
    if HARDWARE_TYPE not in ctx.drivers.hardware_types:
        return []
    rows = ownership.node_rows(ctx, _COLUMNS,
                               dict(filters, driver=HARDWARE_TYPE))
    return [row for row in rows if predicate is None or predicate(row)]


def _hardware_by_uri(ctx: context_mod.ConductorContext, purpose: str
                     ) -> dict[str, dict[str, Any]] | None:
    """All server hardware by URI, or None (logged) when OneView failed."""
    try:
        ov = client_mod.get_client(ctx.conf)
        listed = ov.list_server_hardware(ctx.conf.oneview.page_size)
    except client_mod.OneViewError as exc:
        LOG.error('OneView periodic task "%(purpose)s" skipped this run: '
                  '%(error)s', {'purpose': purpose, 'error': exc})
        return None
    return {str(item.get('uri')): item for item in listed}


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


def _each(ctx: context_mod.ConductorContext, rows: list[Any], purpose: str,
          hardware: dict[str, dict[str, Any]] | None,
          act: Callable[[task_manager.Task, dict[str, Any] | None], None]
          ) -> int:
    """Run ``act`` on each node under its lock; count the nodes changed."""
    changed = 0
    for row in rows:
        found = None
        if hardware is not None:
            uri = (row.driver_info or {}).get(driver_info.HARDWARE_URI)
            found = hardware.get(str(uri))
            if found is None:
                LOG.warning('Node %(node)s: server hardware %(hw)s is not '
                            'in OneView; %(purpose)s skips it',
                            {'node': row.uuid, 'hw': uri, 'purpose': purpose})
                continue
        try:
            with task_manager.acquire(ctx, row.id, purpose=purpose,
                                      retry=False) as task:
                before = task.node.provision_state
                act(task, found)
                changed += task.node.provision_state != before
        except (exception.NodeLocked, exception.NodeNotFound):
            continue
        except exception.NoFreeConductorWorker:
            raise
        except Exception:
            LOG.exception('Node %(node)s: %(purpose)s failed; the other '
                          'nodes are still checked',
                          {'node': row.uuid, 'purpose': purpose})
    return changed


# ---- taken by OneView while available -----------------------------------

_TAKEN = 'OneView check for hardware taken while available'


def _mark_taken(task: task_manager.Task,
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


def _set_in_use(task: task_manager.Task) -> None:
    task.node.maintenance = True
    task.node.maintenance_reason = allocation.MAINTENANCE_REASON
    task.node.fault = None
    info = dict(task.node.driver_internal_info)
    info[allocation.IN_USE_FLAG] = True
    info.pop(allocation.ALLOCATION_ERROR, None)
    task.node.driver_internal_info = info


def check_nodes_taken_by_oneview(ctx: context_mod.ConductorContext) -> int:
    """Available nodes whose hardware OneView took: maintenance, manageable.

    :returns: how many nodes were moved.
    """
    rows = _candidates(ctx, {'provision_state': states.AVAILABLE,
                             'maintenance': False})
    if not rows:
        return 0
    hardware = _hardware_by_uri(ctx, _TAKEN)
    if hardware is None:
        return 0
    # Most available nodes are not taken: decide on the listed data first
    # and lock only the nodes that change (the lock re-checks).
    taken = [row for row in rows if _is_taken(row, hardware)]
    return _each(ctx, taken, _TAKEN, hardware, _mark_taken)


def _is_taken(row: Any, hardware: dict[str, dict[str, Any]]) -> bool:
    """Whether the listed hardware shows ``row``'s as OneView's (or unknown,
    which ``_each`` reports)."""
    found = hardware.get(str((row.driver_info or {}).get(
        driver_info.HARDWARE_URI)))
    return found is None or _owner(row, found) == driver_info.ONEVIEW


# ---- freed by OneView ------------------------------------------------------

_FREED = 'OneView check for hardware freed'


def _provide_freed(task: task_manager.Task,
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
    task.process_event('provide')
    task.spawn_after(cleaning.do_node_clean, task)


def _restore_in_use(ctx: context_mod.ConductorContext, node_id: int) -> None:
    """No worker took the cleaning: keep the node marked for the next run."""
    with task_manager.acquire(ctx, node_id, purpose=_FREED) as task:
        if (task.node.provision_state == states.MANAGEABLE
                and not task.node.maintenance):
            _set_in_use(task)


def check_nodes_freed_by_oneview(ctx: context_mod.ConductorContext) -> int:
    """Nodes this driver put in maintenance whose hardware is free again:
    out of maintenance, then provided (cleaned, then available).

    :returns: how many nodes were provided.
    """
    rows = _candidates(ctx, {'provision_state': states.MANAGEABLE,
                             'maintenance': True}, _marked_by_us)
    if not rows:
        return 0
    hardware = _hardware_by_uri(ctx, _FREED)
    if hardware is None:
        return 0
    changed = 0
    for row in rows:
        try:
            changed += _each(ctx, [row], _FREED, hardware, _provide_freed)
        except exception.NoFreeConductorWorker:
            LOG.warning('Node %(node)s: no free worker to clean it; it is '
                        'tried again at the next run', {'node': row.uuid})
            _restore_in_use(ctx, row.id)
            break
    return changed


# ---- clean failed because OneView had the hardware --------------------------

_CLEANFAIL = 'OneView check for cleaning failed on hardware taken'


def _failed_on_taken(row_or_node: Any) -> bool:
    return bool((row_or_node.driver_internal_info or {}).get(
        allocation.ALLOCATION_ERROR) == allocation.ALLOCATION_ERROR_VALUE)


def _manage_clean_failed(task: task_manager.Task,
                         _hardware: dict[str, Any] | None) -> None:
    node = task.node
    if node.provision_state != states.CLEANFAIL or not _failed_on_taken(node):
        return
    LOG.warning('Node %(node)s: cleaning failed because OneView has its '
                'server hardware; moving it to maintenance and manageable '
                'until OneView frees it', {'node': node.uuid})
    _set_in_use(task)
    task.process_event('manage')


def check_nodes_taken_on_cleanfail(ctx: context_mod.ConductorContext) -> int:
    """Nodes in clean failed because OneView had the hardware: maintenance,
    manageable. Reads only the database.

    :returns: how many nodes were moved.
    """
    rows = _candidates(ctx, {'provision_state': states.CLEANFAIL},
                       _failed_on_taken)
    return _each(ctx, rows, _CLEANFAIL, None, _manage_clean_failed)
