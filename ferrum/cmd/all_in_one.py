# SPDX-License-Identifier: Apache-2.0
"""``ferrum``: API and conductor in one process.

With no config file it runs on an embedded SQLite database under
``./.ferrum/`` with ``fake-hardware`` enabled, upgrades that database's
schema itself, and serves the API on http://127.0.0.1:6385, so ``make
run`` works on a fresh machine. It is ``ferrum-api`` plus the schema
upgrade.
"""

import sys

from ferrum.cmd import api


def main(argv: list[str] | None = None) -> int:
    return api.serve(argv, 'ferrum', upgrade_schema=True)


if __name__ == '__main__':
    sys.exit(main())
