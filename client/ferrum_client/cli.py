# SPDX-License-Identifier: Apache-2.0
"""``baremetal lease ...``: commands for python-ironicclient's ``baremetal``
and openstackclient's ``openstack baremetal``.

They reach the API through the baremetal client the CLI already built, so
``--os-endpoint``, ``--os-cloud``, Keystone and TLS options work as for
every other ``baremetal`` command.
"""

import argparse
import logging
from typing import Any

from keystoneauth1 import adapter
from osc_lib import exceptions
from osc_lib.command import command

from ferrum_client import client as client_mod

LOG = logging.getLogger(__name__)
#: Columns of ``lease list`` (``--long`` shows every field).
_SHORT = ('uuid', 'name', 'project', 'status', 'count', 'start', 'end')


def _client(app: Any) -> client_mod.LeaseClient:
    baremetal = app.client_manager.baremetal
    http = baremetal.http_client
    return client_mod.LeaseClient(adapter.Adapter(
        http.session, service_type='baremetal',
        interface=getattr(http, 'interface', None),
        region_name=getattr(http, 'region_name', None),
        endpoint_override=getattr(http, 'endpoint_override', None)),
        _version(baremetal))


def _version(baremetal: Any) -> str | None:
    """The API version the ``baremetal`` CLI would send: the one given
    with ``--os-baremetal-api-version`` (or ``OS_BAREMETAL_API_VERSION``),
    else the one it negotiates with the server, as its own commands do.

    python-ironicclient keeps it on its HTTP client; its select state
    says whether the version is settled (given, cached or negotiated) or
    still ``latest``, to be lowered to the server's maximum.
    """
    http = baremetal.http_client
    version = getattr(http, 'os_ironic_api_version', None)
    state = getattr(http, 'api_version_select_state', None)
    settled = (isinstance(version, str) and version != 'latest'
               and state in ('user', 'cached', 'negotiated'))
    if settled:
        return str(version)
    negotiate = getattr(baremetal, 'negotiate_api_version', None)
    if negotiate is None:
        return None  # not python-ironicclient: the client's own default
    # Its errors (endpoint down, no version range) are the CLI's own, and
    # the CLI reports them as for any other command.
    return str(negotiate())


def _own_project(app: Any) -> str:
    """The ID of the caller's project: a project member books for its
    own project, which it knows by name (leases, as node owners and
    lessees, hold Keystone project IDs).

    :raises CommandError: no project-scoped token (system scope, or no
        authentication).
    """
    # From the session the baremetal client authenticates with: the same
    # under ``baremetal`` and ``openstack baremetal`` (their client
    # managers differ), None without a project-scoped auth plugin.
    session = app.client_manager.baremetal.http_client.session
    project = session.get_project_id()
    if not project:
        raise exceptions.CommandError(
            'Give --project (the project ID the lease is for): without a '
            'project-scoped token there is no project to default to.')
    return str(project)


def _extra(pairs: list[str] | None) -> dict[str, str]:
    result = {}
    for pair in pairs or []:
        key, sep, value = pair.partition('=')
        if not sep or not key:
            raise exceptions.CommandError(
                '--extra takes key=value, not "%s"' % pair)
        result[key] = value
    return result


def _show(lease: dict[str, Any]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    lease = {k: v for k, v in lease.items() if k != 'links'}
    names = tuple(sorted(lease))
    return names, tuple(lease[name] for name in names)


class _LeaseCommand:
    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(_client(self.app), method)(  # type: ignore
                *args, **kwargs)
        except client_mod.LeaseError as exc:
            # The status as the other baremetal commands end their errors
            # ("... (HTTP 403)"): a 403 (not allowed) and a 404 (not
            # visible) read alike otherwise.
            status = ' (HTTP %s)' % exc.status if exc.status else ''
            raise exceptions.CommandError(str(exc) + status) from None


class CreateLease(_LeaseCommand, command.ShowOne):
    """Book nodes for a time window, all of them or none."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument('--project',
                            help='The project (lessee) the nodes go to, '
                                 'by ID; default the project of a '
                                 'project-scoped token.')
        parser.add_argument('--resource-class',
                            help='Resource class of the nodes.')
        parser.add_argument('--count', type=int,
                            help='How many nodes (default 1, or every '
                                 'candidate node).')
        parser.add_argument('--trait', action='append', dest='traits',
                            help='A trait every node must have; repeatable.')
        parser.add_argument('--candidate-node', action='append',
                            dest='candidate_nodes',
                            help='A node the lease may take; repeatable.')
        # Not --start/--end: the top-level parser would take --end for an
        # abbreviation of its --endpoint options.
        parser.add_argument('--start-time', dest='start',
                            help='ISO 8601 start (default now).')
        parser.add_argument('--end-time', dest='end', required=True,
                            help='ISO 8601 end.')
        parser.add_argument('--before-end-time', dest='before_end',
                            help='ISO 8601 time of the before_end event.')
        parser.add_argument('--name', help='A name for the lease.')
        parser.add_argument('--uuid', help='The lease UUID.')
        parser.add_argument('--owner',
                            help='Only nodes with this owner.')
        parser.add_argument('--extra', action='append', metavar='KEY=VALUE',
                            help='Metadata; repeatable.')
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        fields = {name: getattr(parsed_args, name) for name in (
            'project', 'resource_class', 'count', 'traits',
            'candidate_nodes', 'start', 'end', 'before_end', 'name',
            'uuid', 'owner')}
        fields['extra'] = _extra(parsed_args.extra) or None
        fields['project'] = fields['project'] or _own_project(self.app)
        return _show(self.call('create', **fields))


class ListLeases(_LeaseCommand, command.Lister):
    """List leases."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument('--status', help='Statuses, comma-separated.')
        parser.add_argument('--project', help='Leases of this project.')
        parser.add_argument('--node', help='Leases that have this node.')
        parser.add_argument('--start-time', dest='start',
                            help='Leases running after this time.')
        parser.add_argument('--end-time', dest='end',
                            help='Leases starting before this time.')
        parser.add_argument('--limit', type=int, help='At most this many.')
        parser.add_argument('--long', action='store_true',
                            help='Show every field.')
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        leases = self.call('list', **{name: getattr(parsed_args, name)
                                      for name in ('status', 'project', 'node',
                                                   'start', 'end', 'limit')})
        columns = _SHORT
        if parsed_args.long and leases:
            columns = tuple(k for k in leases[0] if k != 'links')
        return columns, [tuple(lease.get(c) for c in columns)
                         for lease in leases]


class ShowLease(_LeaseCommand, command.ShowOne):
    """Show a lease."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument('lease', help='UUID or name of the lease.')
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> Any:
        return _show(self.call('get', parsed_args.lease))


class SetLease(_LeaseCommand, command.Command):
    """Rename a lease, change its extra, or move its end."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument('lease', help='UUID or name of the lease.')
        parser.add_argument('--name', help='The new name.')
        parser.add_argument('--end-time', dest='end',
                            help='The new ISO 8601 end; extending checks '
                                 'only the added time.')
        parser.add_argument('--extra', action='append', metavar='KEY=VALUE',
                            help='Metadata to set; repeatable.')
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> None:
        patch = [{'op': 'add', 'path': '/extra/%s' % key.replace(
            '~', '~0').replace('/', '~1'), 'value': value}
                 for key, value in _extra(parsed_args.extra).items()]
        for name in ('name', 'end'):
            if getattr(parsed_args, name) is not None:
                patch.append({'op': 'replace', 'path': '/' + name,
                              'value': getattr(parsed_args, name)})
        if not patch:
            raise exceptions.CommandError('Nothing to set; give --name, '
                                          '--end-time or --extra.')
        self.call('update', parsed_args.lease, patch)


class DeleteLease(_LeaseCommand, command.Command):
    """Cancel pending leases; end active ones now."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument('leases', nargs='+', metavar='<lease>',
                            help='UUIDs or names of the leases.')
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> None:
        failures = []
        for lease in parsed_args.leases:
            try:
                self.call('delete', lease)
                print('Deleted lease %s' % lease)
            except exceptions.CommandError as exc:
                failures.append('%s: %s' % (lease, exc))
        if failures:
            raise exceptions.CommandError('\n'.join(failures))
