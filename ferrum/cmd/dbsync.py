# SPDX-License-Identifier: Apache-2.0
"""``ferrum-dbsync``: create or upgrade the database schema."""

import sys

from oslo_config import cfg

from ferrum import conf as ferrum_conf
from ferrum.db import api as db_api
from ferrum.db import migration


def _add_commands(subparsers: object) -> None:
    upgrade = subparsers.add_parser(  # type: ignore[attr-defined]
        'upgrade', help='Upgrade the schema to the newest revision.')
    upgrade.add_argument('--revision', default='head')
    subparsers.add_parser(  # type: ignore[attr-defined]
        'version', help='Print the schema revision of the database.')


def main(argv: list[str] | None = None) -> int:
    conf = cfg.ConfigOpts()
    ferrum_conf.register_opts(conf)
    conf.register_cli_opt(cfg.SubCommandOpt(
        'command', title='Commands', handler=_add_commands))
    conf(argv if argv is not None else sys.argv[1:], project='ferrum')
    db = db_api.Database(conf)
    if conf.command.name == 'upgrade':
        migration.upgrade(db.engine, conf.command.revision)
        print('Database upgraded to %s' % migration.version(db.engine))
    else:
        print(migration.version(db.engine) or 'none (empty database)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
