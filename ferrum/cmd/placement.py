# SPDX-License-Identifier: Apache-2.0
"""``ferrum-placement``: the Placement sync state, and the audit.

- ``ferrum-placement status`` prints the sync state (the document of
  ``GET /v1/placement/status``) as JSON; exit status 0 when in sync, 1 with
  a backlog, a conductor that cannot reach Placement or a refused node.
- ``ferrum-placement audit [--heal]`` compares every node with its provider
  and prints the drift node by node, like ``nova-manage placement audit``;
  ``--heal`` pushes each node that drifted. It compares the leases in
  Placement with their consumers and reservation classes (see
  :mod:`ferrum.placement.lease_audit`), and with ``[allocation] backend
  = placement`` the allocations with their consumers (see
  :mod:`ferrum.placement.consumer_audit`), and heals those too. Exit
  status 0 when there is no drift (left), 3 when there is, 2 when
  Placement cannot be reached, 4 when sync is not configured.

Without ``--config-file`` it reads ``ferrum.conf`` from oslo.config's
usual places, and says on standard error when it found none. It never
creates a database: exit status 2 when there is none, or its schema is
not this ferrum's, or the config is wrong (one line, see
:mod:`ferrum.cmd.startup`).
"""

import json
import os
import sys
from collections.abc import Iterator
from typing import NamedTuple

from oslo_config import cfg

from ferrum import conf as ferrum_conf
from ferrum.cmd import startup
from ferrum.common import exception
from ferrum.common import plural
from ferrum.conf import placement as placement_conf
from ferrum.conf import validation
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.placement import audit
from ferrum.placement import client as client_mod
from ferrum.placement import consumer_audit
from ferrum.placement import errors
from ferrum.placement import lease_audit
from ferrum.placement import status
from ferrum.placement import sync


def _add_commands(subparsers: object) -> None:
    subparsers.add_parser(  # type: ignore[attr-defined]
        'status', help='Print the sync state as JSON.')
    audit_parser = subparsers.add_parser(  # type: ignore[attr-defined]
        'audit', help='Print the drift between ferrum and Placement.')
    audit_parser.add_argument('--heal', action='store_true',
                              help='Push every node that drifted.')


def _status(conf: cfg.ConfigOpts, db: db_api.Database) -> int:
    state = status.summary(conf, db)
    print(json.dumps(state, indent=2))
    in_sync = (not state['backlog']['changes'] and not state['problems']
               and not state['consumer_releases']
               and all(c['placement'] == 'ok' for c in state['conductors']))
    return 0 if in_sync else 1


class _Found(NamedTuple):
    """The three audits' findings, kept apart for the order of the heal."""

    nodes: list[audit.Drift]
    consumers: list[audit.Drift]
    leases: list[audit.Drift]

    def lines(self) -> Iterator[str]:
        for found in self:
            for item in found:
                yield item.line()


def _drift(pusher: sync.Pusher) -> _Found:
    claims = pusher.claims_allocations
    return _Found(audit.drift(pusher),
                  consumer_audit.drift(pusher) if claims else [],
                  lease_audit.drift(pusher))


def _heal(pusher: sync.Pusher, found: _Found) -> dict[str, str]:
    """In the order Placement accepts: consumers (allocations', then
    leases'), inventories (a push of each node), classes last (a class is
    deleted only once no inventory uses it)."""
    outcomes = {}
    if found.consumers:
        outcomes.update(consumer_audit.heal(pusher, found.consumers))
    outcomes.update(lease_audit.heal_consumers(pusher, found.leases))
    nodes = found.nodes
    if found.consumers or found.leases:
        # A consumer healed can change what a node's provider wants.
        nodes = audit.drift(pusher)
    if nodes:
        outcomes.update(audit.heal(pusher, nodes))
    outcomes.update(lease_audit.heal_classes(pusher, found.leases))
    return outcomes


def _audit(conf: cfg.ConfigOpts, db: db_api.Database, heal: bool) -> int:
    if not placement_conf.enabled(conf):
        print('Placement sync is not configured ([placement] auth_type).',
              file=sys.stderr)
        return 4
    pusher = sync.Pusher(conf, db, client_mod.PlacementClient(conf))
    try:
        found = _drift(pusher)
        for line in found.lines():
            print(line)
        if heal and any(found):
            outcomes = _heal(pusher, found)
            for uuid, outcome in sorted(outcomes.items()):
                print('%s healed: %s' % (uuid, outcome))
            found = _drift(pusher)
    except errors.PlacementUnavailable as exc:
        print(str(exc), file=sys.stderr)
        return 2
    print('%s with drift' % plural.count(len(
        {item.node_uuid for item in found.nodes}
        | {item.node_uuid for item in found.consumers}), 'node'))
    print('%s with drift' % plural.count(
        len({item.lease_uuid for item in found.leases}), 'lease'))
    return 3 if any(found) else 0


def main(argv: list[str] | None = None) -> int:
    return startup.main('ferrum-placement', lambda: _main(argv), failure=2)


def _main(argv: list[str] | None) -> int:
    conf = ferrum_conf.load_for_tool(
        argv if argv is not None else sys.argv[1:], _add_commands)
    if not validation.config_files(conf):
        # Defaults are not the service's settings: say what was read.
        print('ferrum-placement: no config file was read (no --config-file, '
              'no ferrum.conf in ~/.ferrum, ~, /etc/ferrum or /etc); using '
              'the defaults: the database under [DEFAULT] state_path %s and '
              'no [placement]. Pass the service\'s --config-file.'
              % os.path.abspath(conf.state_path), file=sys.stderr)
    # Never create a database (or its directory): a missing one is a
    # wrong config file or directory, not a fresh installation.
    db = db_api.Database(conf, create=False)
    try:
        migration.require_current(db.engine)
        if conf.command.name == 'status':
            return _status(conf, db)
        return _audit(conf, db, conf.command.heal)
    except exception.FerrumException as exc:
        print(str(exc), file=sys.stderr)
        return 2
    finally:
        db.dispose()


if __name__ == '__main__':
    sys.exit(main())
