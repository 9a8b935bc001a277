# SPDX-License-Identifier: Apache-2.0
"""``ferrum-placement``: the Placement sync state, and the audit.

- ``ferrum-placement status`` prints the sync state (the document of
  ``GET /v1/placement/status``) as JSON; exit status 0 when in sync, 1 with
  a backlog, a conductor that cannot reach Placement or a refused node.
- ``ferrum-placement audit [--heal]`` compares every node with its provider
  and prints the drift node by node, like ``nova-manage placement audit``;
  ``--heal`` pushes each node that drifted. With ``[allocation] backend =
  placement`` it also compares allocations with their consumers (see
  :mod:`ferrum.inventory.consumer_audit`) and heals those. Exit status 0
  when there is no drift (left), 3 when there is, 2 when Placement cannot
  be reached, 4 when sync is not configured.
"""

import json
import sys

from oslo_config import cfg

from ferrum import conf as ferrum_conf
from ferrum.common import exception
from ferrum.conf import allocation as allocation_conf
from ferrum.conf import placement as placement_conf
from ferrum.db import api as db_api
from ferrum.inventory import audit
from ferrum.inventory import client as client_mod
from ferrum.inventory import consumer_audit
from ferrum.inventory import status
from ferrum.inventory import sync


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


def _audit(conf: cfg.ConfigOpts, db: db_api.Database, heal: bool) -> int:
    if not placement_conf.enabled(conf):
        print('Placement sync is not configured ([placement] auth_type).',
              file=sys.stderr)
        return 4
    client = client_mod.PlacementClient(conf)
    claims = allocation_conf.through_placement(conf)
    try:
        found = audit.drift(db, client, claims=claims)
        for item in found:
            print('%s %s: %s' % (item.node_uuid, item.kind, item.detail))
        if heal and found:
            outcomes = audit.heal(sync.Pusher(conf, db, client), found)
            for uuid, outcome in sorted(outcomes.items()):
                print('%s healed: %s' % (uuid, outcome))
            found = audit.drift(db, client, claims=claims)
        held = _audit_consumers(conf, db, client, heal) if claims else []
    except client_mod.PlacementUnavailable as exc:
        print(str(exc), file=sys.stderr)
        return 2
    print('%d nodes with drift' % len({item.node_uuid for item in found}
                                      | {item.node_uuid for item in held}))
    return 3 if found or held else 0


def _audit_consumers(conf: cfg.ConfigOpts, db: db_api.Database,
                     client: client_mod.PlacementClient,
                     heal: bool) -> list[consumer_audit.ConsumerDrift]:
    """The allocations' consumers (the placement backend); what is left."""
    found = consumer_audit.drift(conf, db, client)
    for item in found:
        print('%s %s: %s' % (item.node_uuid, item.kind, item.detail))
    if heal and found:
        outcomes = consumer_audit.heal(conf, db, client, found)
        for consumer, outcome in sorted(outcomes.items()):
            print('%s healed: %s' % (consumer, outcome))
        found = consumer_audit.drift(conf, db, client)
    return found


def main(argv: list[str] | None = None) -> int:
    conf = cfg.ConfigOpts()
    ferrum_conf.register_opts(conf)
    conf.register_cli_opt(cfg.SubCommandOpt(
        'command', title='Commands', handler=_add_commands))
    conf(argv if argv is not None else sys.argv[1:], project='ferrum')
    db = db_api.Database(conf)
    try:
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
