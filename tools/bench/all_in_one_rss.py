#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: resident memory of the all-in-one ``ferrum`` process.

Fills an SQLite database with ``--nodes`` manageable fake nodes, starts
``ferrum`` on it with the power-state sync running every second (so every
node is loaded again and again), samples the process's RSS for
``--seconds`` and prints one JSON line with the peak (``rss_mb``) and how
many sync passes ran (``sync_passes``, from the log).
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from ferrum import conf as ferrum_conf
from ferrum.common import states
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.objects import base
from ferrum.objects import node as node_obj


def _fill(db: db_api.Database, count: int) -> None:
    now = base.utcnow()
    rows = [{'uuid': base.new_uuid(), 'driver': 'fake-hardware',
             'provision_state': states.MANAGEABLE,
             'power_state': states.POWER_OFF, 'maintenance': False,
             'conductor_group': '', 'protected': False, 'retired': False,
             'created_at': now, 'driver_info': {}, 'driver_internal_info': {},
             'properties': {}, 'instance_info': {}, 'extra': {},
             **{'%s_interface' % kind: 'fake' for kind in (
                 'power', 'management', 'boot', 'deploy', 'inspect',
                 'vendor')}}
            for _ in range(count)]
    with db.writer() as conn:
        conn.execute(node_obj.TABLE.insert(), rows)


def rss_mb(pid: int) -> float:
    """The resident memory of process ``pid``, in MiB, from /proc."""
    with open('/proc/%d/status' % pid) as status:
        for line in status:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=10000)
    parser.add_argument('--seconds', type=float, default=20)
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix='ferrum-rss-')
    config = os.path.join(tmp, 'ferrum.conf')
    log = os.path.join(tmp, 'ferrum.log')
    with open(config, 'w') as out:
        out.write('[DEFAULT]\nstate_path = %s\nlog_file = %s\ndebug = True\n'
                  '[conductor]\nsync_power_state_interval = 1\n' % (tmp, log))
    conf = ferrum_conf.new_conf(['--config-file', config])
    db = db_api.Database(conf)
    migration.upgrade(db.engine)
    _fill(db, args.nodes)
    db.dispose()

    ferrum = os.path.join(os.path.dirname(sys.executable), 'ferrum')
    proc = subprocess.Popen([ferrum, '--config-file', config])
    peak = 0.0
    try:
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline and proc.poll() is None:
            peak = max(peak, rss_mb(proc.pid))
            time.sleep(0.25)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    with open(log) as lines:
        passes = sum('Power sync checked' in line for line in lines)
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({'benchmark': 'all_in_one_rss', 'nodes': args.nodes,
                      'seconds': args.seconds, 'rss_mb': round(peak, 1),
                      'sync_passes': passes}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
