# SPDX-License-Identifier: Apache-2.0
"""``ferrum-dbsync``: create or upgrade the database schema."""

import sys

from oslo_config import cfg

from ferrum import conf as ferrum_conf
from ferrum.cmd import startup
from ferrum.db import api as db_api
from ferrum.db import migration


def _add_commands(subparsers: object) -> None:
    upgrade = subparsers.add_parser(  # type: ignore[attr-defined]
        'upgrade', help='Upgrade the schema to the newest revision.')
    upgrade.add_argument('--revision', default='head')
    subparsers.add_parser(  # type: ignore[attr-defined]
        'version', help='Print the schema revision of the database.')


def main(argv: list[str] | None = None) -> int:
    return startup.main('ferrum-dbsync', lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    # Like ferrum-placement, it finds ferrum.conf in oslo.config's usual
    # places (~/.ferrum, ~, /etc/ferrum, /etc) when none is given.
    conf = ferrum_conf.load_for_program(
        argv if argv is not None else sys.argv[1:],
        cfg.find_config_files('ferrum', 'ferrum'),
        cli_opts=[cfg.SubCommandOpt('command', title='Commands',
                                    handler=_add_commands)],
        setup_logging=False)
    db = db_api.Database(conf)
    try:
        if conf.command.name == 'upgrade':
            migration.upgrade(db.engine, conf.command.revision)
            print('Database upgraded to %s' % migration.version(db.engine))
        else:
            print(migration.version(db.engine) or 'none (empty database)')
    finally:
        db.dispose()
    return 0


if __name__ == '__main__':
    sys.exit(main())
