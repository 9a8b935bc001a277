# SPDX-License-Identifier: Apache-2.0
"""``ferrum-conductor``: the conductor daemon (run it under systemd)."""

import sys

from ferrum.cmd import service_runner
from ferrum.conductor import service


def main(argv: list[str] | None = None) -> int:
    conf = service_runner.load_conf(argv)
    conductor = service.ConductorService(conf)
    return service_runner.run(conf, conductor.start, conductor.stop,
                              'ferrum-conductor')


if __name__ == '__main__':
    sys.exit(main())
