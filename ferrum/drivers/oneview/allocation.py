# SPDX-License-Identifier: Apache-2.0
"""Dynamic allocation: ferrum puts a server profile on a node's hardware only
while it uses it (deploying, deployed, cleaning) and removes it afterwards,
so OneView users can take idle hardware.

Who has the hardware follows the spec's three rules
(:func:`ferrum.drivers.oneview.driver_info.ownership`). Hardware a OneView
user took is never touched: allocating fails with :class:`HardwareInUse`,
and deallocating leaves the user's profile alone.
"""

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers.oneview import client as client_mod
from ferrum.drivers.oneview import driver_info
from ferrum.drivers.oneview import errors

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)

#: Persisted on nodes, so never reworded: the maintenance reason the
#: periodic tasks set, and look for before taking a node out of maintenance.
MAINTENANCE_REASON = 'node in use by OneView'
#: driver_internal_info key: this driver put the node in maintenance
#: because OneView had its hardware (the freed-hardware task's licence).
IN_USE_FLAG = 'oneview_in_use'
#: driver_internal_info key and value set when cleaning could not start
#: because OneView had the hardware (upstream's marker, kept verbatim).
ALLOCATION_ERROR = 'oneview_error'
ALLOCATION_ERROR_VALUE = 'server hardware allocation error'
#: driver_internal_info key: the boot device asked for, applied to the
#: profile now if there is one, or when one is applied.
BOOT_DEVICE = 'oneview_boot_device'

#: ferrum boot device -> OneView boot order entry.
BOOT_DEVICES = {'pxe': 'PXE', 'disk': 'HardDisk', 'cdrom': 'CD'}

#: Server hardware states while OneView applies or removes its profile.
_IN_FLUX = frozenset({'ApplyingProfile', 'RemovingProfile'})
#: Seconds between reads of hardware whose profile OneView is changing.
_SETTLE_POLL_S = 0.5

#: The request that turns hardware off at once (upstream's hard off).
POWER_OFF = {'powerState': 'Off', 'powerControl': 'PressAndHold'}


class HardwareInUse(errors.OneViewError):
    msg_fmt = ('Server hardware %(hardware)s of node %(node)s is in use by '
               'OneView (it has server profile %(profile)s, which ferrum did '
               'not apply). Free it in OneView; a periodic task then makes '
               'the node available again through cleaning.')


def params(task: 'Task') -> driver_info.OneViewNode:
    return driver_info.parse(task.node.driver_info, task.node.properties)


def client_for(task: 'Task') -> client_mod.Client:
    return client_mod.get_client(task.ctx.conf)


def owner(task: 'Task', hardware: dict[str, Any],
          ov: client_mod.Client | None = None) -> str:
    """Who has this node's hardware: ``driver_info.FREE``, ``FERRUM`` or
    ``ONEVIEW``, from ``hardware`` (its OneView JSON).

    With ``ov``, a profile the node did not record is read once more: one
    named for this node (:func:`driver_info.named_for`) is ferrum's, left
    by an apply that was interrupted before it could be recorded (the
    conductor died), and is recorded now. Without ``ov`` only the record
    counts and nothing is asked.
    """
    profile = hardware.get('serverProfileUri')
    who = driver_info.ownership(
        profile, task.node.driver_info.get(driver_info.APPLIED_PROFILE_URI))
    if who != driver_info.ONEVIEW or ov is None:
        return who
    try:
        name = ov.get_profile(str(profile)).get('name')
    except errors.OneViewNotFound:
        return who  # removed meanwhile: not ours to know about
    if not driver_info.named_for(name, task.node.uuid):
        return who
    LOG.warning('Node %(node)s: server profile %(profile)s "%(name)s" on '
                '%(hw)s carries this node\'s UUID: ferrum applied it and was '
                'interrupted before recording it; recording it now',
                {'node': task.node.uuid, 'profile': profile, 'name': name,
                 'hw': hardware.get('uri')})
    _set_applied(task, str(profile))
    return driver_info.FERRUM


def _settled(task: 'Task', ov: client_mod.Client, uri: str,
             hardware: dict[str, Any],
             sleep: Callable[[float], None] = time.sleep,
             clock: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    """``hardware`` once OneView no longer applies or removes ferrum's
    profile on it: after an interrupted apply or removal, the task ferrum
    started may still be running, and acting on its profile meanwhile
    would race it.

    :raises OneViewTaskError: still changing after ``[oneview]
        task_timeout`` seconds.
    """
    limit = ov.settings.task_timeout
    deadline = clock() + limit if limit else None
    LOG.info('Node %(node)s: OneView is still busy with the profile of '
             '%(hw)s (%(state)s); waiting for it',
             {'node': task.node.uuid, 'hw': uri,
              'state': hardware.get('state')})
    while hardware.get('state') in _IN_FLUX:
        if deadline is not None and clock() > deadline:
            raise errors.OneViewTaskError(
                action='waiting for %s' % uri,
                reason='its profile is still %s after %ss ([oneview] '
                       'task_timeout)' % (hardware.get('state'), limit))
        sleep(_SETTLE_POLL_S)
        hardware = ov.get_server_hardware(uri)
    return hardware


def check_compatibility(task: 'Task', ov: client_mod.Client,
                        hardware: dict[str, Any] | None = None) -> None:
    """Fail unless the node's template fits its hardware.

    :raises InvalidParameterValue: naming every mismatch.
    :raises OneViewError: OneView could not be read.
    """
    node = params(task)
    if hardware is None:
        hardware = ov.get_server_hardware(node.server_hardware_uri)
    template = ov.get_template(node.server_profile_template_uri)
    errors = driver_info.compatibility_errors(hardware, template, node)
    if errors:
        raise exception.InvalidParameterValue(
            reason='Node %s: server hardware %s and its template do not '
                   'match: %s.' % (task.node.uuid, node.server_hardware_uri,
                                   '; '.join(errors)))


def _set_applied(task: 'Task', uri: str | None) -> None:
    """Record (or forget) our profile, end any apply in progress, and write
    it at once: a profile the node does not remember would look like a
    OneView user's forever."""
    info = dict(task.node.driver_info)
    if uri is None:
        info.pop(driver_info.APPLIED_PROFILE_URI, None)
    else:
        info[driver_info.APPLIED_PROFILE_URI] = uri
    task.node.driver_info = info
    internal = dict(task.node.driver_internal_info)
    internal.pop(driver_info.APPLYING, None)
    task.node.driver_internal_info = internal
    task.node.save()


def _begin_apply(task: 'Task', profile_name: str) -> None:
    """Say, before OneView hears of it, which profile is being applied:
    the record survives a crash, and the name says whose it is."""
    internal = dict(task.node.driver_internal_info)
    internal[driver_info.APPLYING] = profile_name
    task.node.driver_internal_info = internal
    task.node.save()


def allocate(task: 'Task', profile_name: str) -> str:
    """Make sure ferrum's profile is on the node's hardware; return its URI.

    Reuses the profile ferrum applied before; otherwise applies a new one
    from the node's template (with the requested boot device first) and
    records it in ``driver_info applied_server_profile_uri``.

    :raises HardwareInUse: a OneView user has the hardware.
    :raises InvalidParameterValue: the template does not fit the hardware.
    :raises OneViewError: OneView failed or could not be reached.
    """
    node = params(task)
    ov = client_for(task)
    hardware, who = judge(task, ov, node.server_hardware_uri)
    if who == driver_info.ONEVIEW:
        raise HardwareInUse(hardware=node.server_hardware_uri,
                            node=task.node.uuid,
                            profile=hardware.get('serverProfileUri'))
    node = params(task)  # owner() may have recorded an unrecorded profile
    if who == driver_info.FERRUM:
        LOG.info('Node %(node)s: server profile %(profile)s is already '
                 'applied to %(hw)s, reusing it',
                 {'node': task.node.uuid, 'hw': node.server_hardware_uri,
                  'profile': node.applied_server_profile_uri})
        if task.node.driver_internal_info.get(driver_info.APPLYING):
            _set_applied(task, node.applied_server_profile_uri)
        return str(node.applied_server_profile_uri)
    if node.applied_server_profile_uri:
        LOG.warning('Node %(node)s: server profile %(profile)s it recorded '
                    'is no longer on %(hw)s; forgetting it',
                    {'node': task.node.uuid, 'hw': node.server_hardware_uri,
                     'profile': node.applied_server_profile_uri})
        _set_applied(task, None)
    check_compatibility(task, ov, hardware)
    wanted = (task.node.driver_internal_info.get(BOOT_DEVICE) or {}).get(
        'boot_device')
    _begin_apply(task, profile_name)
    try:
        uri = ov.create_profile(
            node.server_profile_template_uri, node.server_hardware_uri,
            profile_name, first_boot_device=BOOT_DEVICES.get(wanted or ''))
    except errors.OneViewError:
        _adopt_half_applied(task, ov, node.server_hardware_uri)
        raise
    _set_applied(task, uri)
    LOG.info('Node %(node)s: applied server profile %(profile)s "%(name)s" '
             'to %(hw)s', {'node': task.node.uuid, 'profile': uri,
                           'name': profile_name,
                           'hw': node.server_hardware_uri})
    return uri


def _adopt_half_applied(task: 'Task', ov: client_mod.Client,
                        hardware_uri: str) -> None:
    """After a failed or timed-out apply, record the profile if OneView
    kept it anyway, or end the apply if it did not. Best effort: errors
    are logged, and the name rule still finds the profile later."""
    try:
        hardware = ov.get_server_hardware(hardware_uri)
        if owner(task, hardware, ov) == driver_info.FREE:
            _set_applied(task, None)
    except errors.OneViewError as exc:
        LOG.warning('Node %(node)s: could not check for a half-applied '
                    'profile: %(error)s', {'node': task.node.uuid,
                                          'error': exc})


def deallocate(task: 'Task') -> None:
    """Remove ferrum's profile from the hardware (powering it off first).

    Does nothing (and asks nothing) when the node neither recorded a
    profile nor was applying one. A profile of a OneView user is left
    alone; the node only forgets its stale record.

    :raises OneViewError: OneView failed or could not be reached; the node
        keeps its record, so a retry removes the profile.
    """
    node = params(task)
    if not (node.applied_server_profile_uri or
            task.node.driver_internal_info.get(driver_info.APPLYING)):
        return
    ov = client_for(task)
    hardware, who = judge(task, ov, node.server_hardware_uri)
    applied = params(task).applied_server_profile_uri
    if who == driver_info.FERRUM:
        if hardware.get('powerState') != 'Off':
            # Appliances refuse to remove the profile of a running server.
            ov.set_power_state(node.server_hardware_uri, POWER_OFF)
            task.node.power_state = states.POWER_OFF
        ov.delete_profile(str(applied))
        LOG.info('Node %(node)s: removed server profile %(profile)s from '
                 '%(hw)s', {'node': task.node.uuid, 'profile': applied,
                            'hw': node.server_hardware_uri})
    elif who == driver_info.ONEVIEW:
        LOG.warning('Node %(node)s: %(hw)s now has server profile %(other)s '
                    'of a OneView user, not ours (%(profile)s); leaving it',
                    {'node': task.node.uuid, 'hw': node.server_hardware_uri,
                     'other': hardware.get('serverProfileUri'),
                     'profile': applied})
    _set_applied(task, None)


def judge(task: 'Task', ov: client_mod.Client, uri: str
          ) -> tuple[dict[str, Any], str]:
    """The hardware and who has it, once OneView is done changing ferrum's
    profile on it (see :func:`owner` and :func:`_settled`)."""
    hardware = ov.get_server_hardware(uri)
    who = owner(task, hardware, ov)
    if who == driver_info.FERRUM and hardware.get('state') in _IN_FLUX:
        hardware = _settled(task, ov, uri, hardware)
        who = owner(task, hardware, ov)
    return hardware, who


def forget_if_removed(task: 'Task', ov: client_mod.Client) -> None:
    """Forget the recorded profile when OneView no longer has it.

    A removal ferrum started runs on as a OneView task when its conductor
    dies, and may finish before another conductor tears the node down:
    the record then names a profile that does not exist, and every later
    call on it (the tear-down's boot order, the removal) would fail with
    "does not exist". Only a profile that is really gone is forgotten; an
    unassigned one that still exists stays recorded, so it is removed.
    """
    applied = params(task).applied_server_profile_uri
    if not applied:
        return
    try:
        ov.get_profile(applied)
    except errors.OneViewNotFound:
        LOG.info('Node %(node)s: server profile %(profile)s is already '
                 'gone from OneView (a removal that finished after its '
                 'conductor stopped); forgetting it',
                 {'node': task.node.uuid, 'profile': applied})
        _set_applied(task, None)


def deploy_profile_name(task: 'Task') -> str:
    """The instance's display name (or the node's name) and the node UUID
    (upstream put the instance UUID there; ferrum needs the node's to
    recognise its profile after a crash)."""
    node = task.node
    display = (node.instance_info or {}).get('display_name') or (
        node.name or node.instance_uuid or node.uuid)
    return driver_info.profile_name(str(display), node.uuid)


def cleaning_profile_name(task: 'Task') -> str:
    return driver_info.profile_name('ferrum cleaning', task.node.uuid)
