#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: one power-state sync pass over many simulated IPMI BMCs.

Starts ``tools/bmc_simulator/bmcsim.py`` with ``--bmcs`` BMCs (one process,
one UDP port each), enrolls one ``ipmi`` node per BMC in a conductor running
in this process, and times one run of the power-state sync, which reads
every node's power state with the real ``ipmitool``. The nodes are put in
``manageable`` directly in the database: verifying them would be another
``--bmcs`` ipmitool calls of set-up.

The figure to compare with is what the machine can do at best: one
ipmitool call takes ``call_s`` (the median of 20 sequential ``power
status`` calls, measured in the same run), and ipmitool is CPU-bound, so
``limit_seconds`` = bmcs x call_s / cores. Prints one JSON line with
``seconds``, ``limit_seconds``, ``ratio`` (seconds / limit_seconds; the
target is <= 1.3), ``failures`` (nodes whose state could not be read) and
the settings used. The exit status is 1 when ``failures`` is not 0.

    .venv/bin/python tools/bench/power_sync.py --bmcs 500
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from ferrum import conf as ferrum_conf
from ferrum.common import states
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.objects import node as node_obj

_SIMULATOR = (pathlib.Path(__file__).resolve().parents[1]
              / 'bmc_simulator' / 'bmcsim.py')
_USER, _PASSWORD = 'admin', 'bench-password'


def _start_simulator(count: int, state_dir: str
                     ) -> tuple[subprocess.Popen[str], list[int]]:
    proc = subprocess.Popen(
        [sys.executable, str(_SIMULATOR), '--count', str(count),
         '--user', _USER, '--password', _PASSWORD, '--state-dir', state_dir],
        stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith('READY'):
        proc.kill()
        raise SystemExit('the BMC simulator did not start: %r' % line)
    return proc, [int(port) for port in line.split()[1:]]


def _call_seconds(port: int, password_file: str, runs: int = 20) -> float:
    """Median wall time of one ``ipmitool power status``, as ferrum runs it."""
    argv = ['ipmitool', '-I', 'lanplus', '-H', '127.0.0.1', '-p', str(port),
            '-L', 'ADMINISTRATOR', '-U', _USER, '-N', '1', '-R', '1', '-v',
            '-f', password_file, 'power', 'status']
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                       check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _conductor(state_path: str, workers: int) -> service.ConductorService:
    conf = ferrum_conf.new_conf()
    conf.set_override('state_path', state_path)
    conf.set_override('host', 'bench')
    conf.set_override('enabled_hardware_types', ['ipmi'])
    conf.set_override('enabled_power_interfaces', ['ipmitool'])
    conf.set_override('enabled_management_interfaces', ['ipmitool'])
    conf.set_override('enabled_deploy_interfaces', ['ramdisk'])
    conf.set_override('sync_power_state_workers', workers, 'conductor')
    conf.set_override('periodic_max_workers', workers, 'conductor')
    conf.set_override('min_command_interval', 0.0, 'ipmi')
    db = db_api.Database(conf)
    migration.upgrade(db.engine)
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    return svc


def _enroll(svc: service.ConductorService, ports: list[int]) -> list[int]:
    ids = []
    for port in ports:
        node = svc.manager.create_node({'driver': 'ipmi', 'driver_info': {
            'ipmi_address': '127.0.0.1', 'ipmi_port': port,
            'ipmi_username': _USER, 'ipmi_password': _PASSWORD}})
        node.provision_state = states.MANAGEABLE
        node.power_state = None  # unknown: the sync records what it reads
        node.save()
        ids.append(node.id)
    return ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--bmcs', type=int, default=500)
    parser.add_argument('--workers', type=int, default=8,
                        help='[conductor] sync_power_state_workers')
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        proc, ports = _start_simulator(args.bmcs, os.path.join(tmp, 'bmcs'))
        try:
            password_file = os.path.join(tmp, 'password')
            with open(password_file, 'w') as out:
                out.write(_PASSWORD)
            os.chmod(password_file, 0o600)
            call_s = _call_seconds(ports[0], password_file)
            svc = _conductor(os.path.join(tmp, 'state'), args.workers)
            try:
                ids = _enroll(svc, ports)
                started = time.perf_counter()
                svc.power_sync.sync_power_states(svc.ctx)
                seconds = time.perf_counter() - started
                nodes = [node_obj.Node.get(svc.ctx.db, i) for i in ids]
            finally:
                svc.stop()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    failures = sum(1 for n in nodes if n.power_state != states.POWER_OFF)
    limit = args.bmcs * call_s / cores
    print(json.dumps({
        'benchmark': 'power_sync', 'bmcs': args.bmcs,
        'workers': args.workers, 'cores': cores, 'call_s': round(call_s, 4),
        'seconds': round(seconds, 2), 'limit_seconds': round(limit, 2),
        'ratio': round(seconds / limit, 3), 'failures': failures}))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
