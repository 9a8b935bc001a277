# SPDX-License-Identifier: Apache-2.0
"""``/v1/leases`` and ``/v1/nodes/{node}/leases``: ferrum's lease extension.

Leases are not part of Ironic's API, so no microversion gates them; they
keep its conventions (error body, ``fields``, ``limit``/``marker``, JSON
Patch). Creation is all or nothing: every node over the whole window, or a
409 that says how many nodes matched each requirement. The handlers work
on the objects directly; the conductors' lease engine
(:mod:`ferrum.leases.engine`) starts and ends leases.
"""

import datetime
import uuid as uuidlib
from typing import Any

import flask
from oslo_db import exception as db_exc

from ferrum.api import access
from ferrum.api import body
from ferrum.api import listing
from ferrum.api import services
from ferrum.api.schemas import lease as lease_schema
from ferrum.api.schemas import trait as trait_schema
from ferrum.api.views import lease as lease_view
from ferrum.common import exception
from ferrum.common import lease_statuses as statuses
from ferrum.common import plural
from ferrum.conf import placement as placement_conf
from ferrum.leases import selection
from ferrum.leases import windows
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import base
from ferrum.objects import lease as lease_obj
from ferrum.objects.lease import nodes as lease_nodes

_SORT_COLUMNS = {'id': 'id', 'uuid': 'uuid', 'name': 'name',
                 'project': 'project', 'status': 'status',
                 'start': 'start_at', 'end': 'end_at',
                 'created_at': 'created_at', 'updated_at': 'updated_at'}
#: The calendar's default span when ``end`` is not given.
_CALENDAR_DAYS = 30


def _fields() -> list[str]:
    fields = listing.parse_fields(lease_view.FIELDS, since_minor=None)
    if fields is None:
        return lease_view.FIELDS
    return fields if 'links' in fields else fields + ['links']


# ---- reading ---------------------------------------------------------------

def _window_arg(name: str) -> datetime.datetime | None:
    value = flask.request.args.get(name)
    return None if value is None else windows.parse(name, value)


def _filters() -> dict[str, Any]:
    args = flask.request.args
    filters: dict[str, Any] = {}
    if args.get('status') is not None:
        wanted = set(args['status'].split(','))
        unknown = sorted(wanted - set(lease_schema.STATUSES))
        if unknown:
            raise exception.InvalidParameterValue(
                reason='status must be one or more (comma-separated) of %s, '
                       'not "%s".' % (', '.join(lease_schema.STATUSES),
                                      unknown[0][:100]))
        filters['status'] = wanted
    project = access.list_project('lease', args.get('project'))
    if project is not None or args.get('project') is not None:
        filters['project'] = project or args['project']
    if args.get('node') is not None:
        filters['node_id'] = access.named_node(args['node']).id
    start, end = _window_arg('start'), _window_arg('end')
    if start is not None or end is not None:
        filters['window'] = (start or datetime.datetime(1970, 1, 2),
                             end or datetime.datetime(9999, 1, 1))
    return filters


def list_leases() -> dict[str, Any]:
    fields = _fields()
    page = listing.parse_page(_SORT_COLUMNS)
    marker = None
    if page.marker is not None:
        marker = access.lease(page.marker, 'baremetal:lease:get')
    leases = lease_obj.Lease.list(
        services.db(), _filters(), page.limit, _SORT_COLUMNS[page.sort_key],
        page.sort_dir, marker)
    result: dict[str, Any] = {'leases': [lease_view.render(lease, fields)
                                         for lease in leases]}
    result.update(listing.next_link(page, len(leases),
                                    leases[-1].uuid if leases else None))
    return result


def get_lease(lease_ident: str) -> dict[str, Any]:
    return lease_view.render(access.lease(lease_ident, 'baremetal:lease:get'),
                             _fields())


def node_calendar(node_ident: str) -> dict[str, Any]:
    """A node's leases over a span, and the free gaps between them."""
    node = access.node(node_ident, 'baremetal:lease:list', named=True)
    # Another project's leases show as busy time, not by name.
    mine = (None if access.allowed('baremetal:lease:list_all')
            else access.context().project_id)
    now = services.clock().replace(microsecond=0)
    start = _window_arg('start') or now
    end = _window_arg('end') or start + datetime.timedelta(
        days=_CALENDAR_DAYS)
    if end <= start:
        raise exception.InvalidParameterValue(
            reason='end must come after start.')
    rows = lease_nodes.calendar(services.db(), node.id, start, end)
    gaps = windows.free_gaps(((r['start_at'], r['block_end']) for r in rows),
                             start, end)
    return {
        'node_uuid': node.uuid, 'start': windows.render(start),
        'end': windows.render(end),
        'leases': [{**_calendar_identity(r, mine), 'status': r['status'],
                    'start': windows.render(r['start_at']),
                    'end': windows.render(r['end_at']),
                    'blocked_until': windows.render(r['block_end'])}
                   for r in rows],
        'free': [{'start': windows.render(s), 'end': windows.render(e)}
                 for s, e in gaps]}


def _calendar_identity(row: Any, mine: str | None) -> dict[str, Any]:
    """A calendar entry's lease, unless it is another project's and the
    caller sees only its own (``mine``)."""
    if mine is not None and row['project'] != mine:
        return {'uuid': None, 'name': None, 'project': None}
    return {'uuid': row['uuid'], 'name': row['name'],
            'project': row['project']}


# ---- writing ---------------------------------------------------------------

def _count(values: dict[str, Any]) -> int:
    candidates = values.get('candidate_nodes')
    count = values.get('count', len(candidates) if candidates else 1)
    if not 1 <= count <= lease_schema.MAX_COUNT:
        raise exception.InvalidParameterValue(
            reason='count must be 1 to %d, not %d.' % (lease_schema.MAX_COUNT,
                                                       count))
    if candidates is not None and count > len(candidates):
        raise exception.InvalidParameterValue(
            reason='count (%d) is more than the %s given.'
                   % (count, plural.count(len(candidates), 'candidate node')))
    return int(count)


def _check_identity(values: dict[str, Any]) -> None:
    if values.get('name') is not None and base.is_uuid_like(values['name']):
        raise exception.InvalidParameterValue(
            reason='A lease name cannot look like a UUID: %s' % values['name'])
    if 'uuid' in values:
        if not base.is_uuid_like(values['uuid']):
            raise exception.InvalidParameterValue(
                reason='uuid must be a UUID, not "%s".' % values['uuid'][:100])
        # One spelling (Placement takes only this one for the lease's
        # consumer and class).
        values['uuid'] = str(uuidlib.UUID(values['uuid']))
        try:
            allocation_obj.Allocation.get(services.db(), values['uuid'])
        except exception.AllocationNotFound:
            return
        # In Placement the lease's consumer has the lease's uuid.
        raise exception.LeaseConflict(reason=(
            'uuid %s is an allocation\'s; choose another for the lease.'
            % values['uuid']))


def _check_project(values: dict[str, Any]) -> None:
    """Who books for whom, from which nodes, as Ironic decides an
    allocation's owner: a system-scoped caller that may create the lease
    books for any project, from any nodes (or ``owner``'s); a
    project-scoped one books from its own project's nodes, and names
    another ``owner`` only with ``baremetal:lease:create_restricted``
    (the elevated service role). A project's own lease also takes nodes
    without an owner (Blazar's free pool) unless
    ``baremetal:lease:create:shared_pool`` denies it.

    :raises Forbidden: another project, or another project's nodes.
    """
    access.check('baremetal:lease:create',
                 access.lease_target(values['project']))
    ctx = access.context()
    if ctx.system_scope == 'all':
        return
    asked = values.get('owner')
    if asked is None:
        values['owner'] = ctx.project_id
    elif asked != ctx.project_id and not access.allowed(
            'baremetal:lease:create_restricted'):
        raise access.Forbidden(rule='baremetal:lease:create_restricted')
    values['shared_pool'] = access.allowed(
        'baremetal:lease:create:shared_pool',
        access.lease_target(values['project']))


def create_lease() -> flask.Response:
    values = {key: value for key, value in body.json_body(
        lease_schema.CREATE).items() if value is not None}
    _check_project(values)
    _check_identity(values)
    for trait in values.get('traits', []):
        trait_schema.check(trait)
    values['traits'] = sorted(set(values.get('traits', [])))
    if 'candidate_nodes' in values:
        values['candidate_nodes'] = access.candidate_uuids(
            values['candidate_nodes'])
    elif 'resource_class' not in values:
        raise exception.InvalidParameterValue(
            reason='A lease needs a "resource_class" or "candidate_nodes".')
    values['count'] = _count(values)
    conf = services.conf()
    now = services.clock().replace(microsecond=0)
    start = (windows.parse('start', values.pop('start'))
             if 'start' in values else now)
    end = windows.parse('end', values.pop('end'))
    windows.check(conf, start, end, now)
    asked = values.pop('before_end', None)
    values.update(
        start_at=start, end_at=end,
        cleaning_margin=conf.lease.cleaning_margin,
        before_end_at=windows.before_end(
            conf, start, end,
            windows.parse('before_end', asked) if asked else None))
    free_now = start <= now + datetime.timedelta(
        seconds=conf.lease.guard_time)

    def pick(conn: Any, lease: lease_obj.Lease) -> list[tuple[int, str]]:
        return selection.pick_all(
            conn, selection.Ask.of(lease, lease.start_at, free_now),
            lease.count)

    # The conductors create the class (the engine's sweep, within one
    # [lease] check_interval): the request path calls no other service,
    # so a slow Placement cannot slow a booking.
    values['placement_class'] = placement_conf.enabled(conf)
    try:
        lease = lease_obj.Lease.create(services.db(), values, pick)
    except db_exc.DBDuplicateEntry:
        raise exception.LeaseConflict(
            reason='A lease with uuid %s already exists; choose another.'
                   % values.get('uuid')) from None
    return listing.created('leases', lease.uuid,
                           lease_view.render(lease, lease_view.FIELDS))


def patch_lease(lease_ident: str) -> dict[str, Any]:
    lease = access.lease(lease_ident, 'baremetal:lease:update')
    document = lease_view.render(lease, lease_view.FIELDS)
    changes = body.patch_changes(
        document, body.json_body(), lease_schema.UPDATABLE,
        'only the name, extra and end of a lease can change.')
    if 'extra' in changes and changes['extra'] is None:
        changes['extra'] = {}
    body.validate(changes, lease_schema.UPDATE, 'lease update')
    _check_identity({'name': changes.get('name')})
    if 'end' in changes:
        _move_end(lease, windows.parse('end', changes.pop('end')))
    for name, value in changes.items():
        setattr(lease, name, value)
    lease.save()
    return lease_view.render(lease, lease_view.FIELDS)


def _move_end(lease: lease_obj.Lease, end: datetime.datetime) -> None:
    if lease.status not in (statuses.PENDING, statuses.ACTIVE):
        raise exception.LeaseConflict(reason=(
            'The end of a lease in status "%s" cannot move; only pending and '
            'active leases can.' % lease.status))
    windows.check(services.conf(), lease.start_at, end,
                  services.clock().replace(microsecond=0), new=False)
    before = lease.before_end_at
    if before is not None:
        # The event keeps its distance from the end, as in Blazar.
        before = max(lease.start_at, before + (end - lease.end_at))
    lease.set_end(end, before)


def delete_lease(lease_ident: str) -> flask.Response:
    """Cancel a pending lease; end an active (or failed) one now."""
    lease = access.lease(lease_ident, 'baremetal:lease:delete')
    if lease.status == statuses.PENDING:
        if not lease.transition('cancel'):
            raise exception.LeaseConflict(reason=(
                'Lease %s changed status meanwhile; read it and try again.'
                % lease.uuid))
    elif lease.status in (statuses.ACTIVE, statuses.ERROR):
        now = services.clock().replace(microsecond=0)
        if lease.end_at > now:
            before = lease.before_end_at
            end = max(now, lease.start_at)
            lease.set_end(end, before if before is None else min(before, end))
    else:
        raise exception.LeaseConflict(reason=(
            'Lease %s is %s; %s' % (lease.uuid, lease.status,
                                    'it is already over.'
                                    if lease.status in statuses.FINAL else
                                    'try again once that is done.')))
    return flask.Response(status=204)
