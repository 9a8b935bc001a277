#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: one power-state sync pass over many simulated BMCs.

``--driver ipmi`` (the default) starts ``tools/bmc_simulator/bmcsim.py``
with ``--bmcs`` BMCs (one process, one UDP port each), enrolls one ``ipmi``
node per BMC in a conductor running in this process, and times one run of
the power-state sync, which reads every node's power state with the real
``ipmitool``. The nodes are put in ``manageable`` directly in the database:
verifying them would be another ``--bmcs`` ipmitool calls of set-up.

The figure to compare with is what the machine can do at best: one
ipmitool call takes ``call_s`` (the median of 20 sequential ``power
status`` calls, measured in the same run), and ipmitool is CPU-bound, so
``limit_seconds`` = bmcs x call_s / cores. Prints one JSON line with
``seconds``, ``limit_seconds``, ``ratio`` (seconds / limit_seconds; the
target is <= 1.3), ``failures`` (nodes whose state could not be read) and
the settings used.

``--driver redfish`` starts one real ``sushy-emulator`` (fake driver,
HTTP Basic auth; tools/redfish_emulator.py) with ``--systems`` Systems,
enrolls one ``redfish`` node per System, and times the conductor's real
power sync (the periodic, ``ctx.each_node`` over ``--workers`` threads,
the driver's connection cache) against a bare sushy client doing the same
reads in the same run: one ``sushy.Sushy`` with the same timeouts, kept
between runs as the driver keeps its own, reading each System's
``power_state`` from ``--workers`` threads. After one untimed run of each,
three kinds of run alternate, ``--rounds`` times each: the sync when
nothing changed (what most runs find: ``seconds``), the sync when every
node's state is unknown so that each node is written (what the first run
after enrolment does: ``recording_seconds``), and the bare client
(``bare_seconds``); each is the median of its runs. ``ratio`` is
``seconds / bare_seconds`` (the target is <= 1.3), ``recording_ratio``
the same for the recording runs; ``failures`` counts the nodes (or bare
reads) that did not read "off".

The exit status is 1 when ``failures`` is not 0.

    .venv/bin/python tools/bench/power_sync.py --bmcs 500
    .venv/bin/python tools/bench/power_sync.py --driver redfish --systems 200
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
from concurrent import futures
from typing import Any

from ferrum import conf as ferrum_conf
from ferrum.common import states
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.objects import node as node_obj

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from tools import redfish_emulator  # noqa: E402

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


#: Interfaces each driver's nodes use.
_INTERFACES = {'ipmi': ('ipmitool', 'ipmitool'),
               'redfish': ('redfish', 'redfish')}


def _conductor(state_path: str, workers: int,
               driver: str = 'ipmi') -> service.ConductorService:
    power, management = _INTERFACES[driver]
    conf = ferrum_conf.new_conf()
    conf.set_override('state_path', state_path)
    conf.set_override('host', 'bench')
    conf.set_override('enabled_hardware_types', [driver])
    conf.set_override('enabled_power_interfaces', [power])
    conf.set_override('enabled_management_interfaces', [management])
    conf.set_override('enabled_deploy_interfaces', ['ramdisk'])
    conf.set_override('sync_power_state_workers', workers, 'conductor')
    conf.set_override('periodic_max_workers', workers, 'conductor')
    conf.set_override('min_command_interval', 0.0, 'ipmi')
    db = db_api.Database(conf)
    migration.upgrade(db.engine)
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    return svc


def _enroll(svc: service.ConductorService, driver: str,
            infos: list[dict[str, Any]]) -> list[int]:
    ids = []
    for info in infos:
        node = svc.manager.create_node({'driver': driver,
                                        'driver_info': info})
        node.provision_state = states.MANAGEABLE
        node.power_state = None  # unknown: the sync records what it reads
        node.save()
        ids.append(node.id)
    return ids


def _ipmi(args: argparse.Namespace) -> dict[str, Any]:
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
                ids = _enroll(svc, 'ipmi', [
                    {'ipmi_address': '127.0.0.1', 'ipmi_port': port,
                     'ipmi_username': _USER, 'ipmi_password': _PASSWORD}
                    for port in ports])
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
    return {'benchmark': 'power_sync', 'bmcs': args.bmcs,
            'workers': args.workers, 'cores': cores,
            'call_s': round(call_s, 4), 'seconds': round(seconds, 2),
            'limit_seconds': round(limit, 2),
            'ratio': round(seconds / limit, 3), 'failures': failures}


def _ferrum_round(svc: service.ConductorService, ids: list[int],
                  record: bool) -> tuple[float, int]:
    """One run of the power sync. With ``record``, every node's power
    state is unknown first, so the run writes each node (as the first run
    after enrolment does); else nothing changed since the last run (as
    most runs find)."""
    if record:
        for node_id in ids:
            node = node_obj.Node.get(svc.ctx.db, node_id)
            node.power_state = None
            node.save()
    started = time.perf_counter()
    svc.power_sync.sync_power_states(svc.ctx)
    seconds = time.perf_counter() - started
    failures = sum(1 for i in ids if node_obj.Node.get(
        svc.ctx.db, i).power_state != states.POWER_OFF)
    return seconds, failures


class _Bare:
    """The same reads through sushy alone: one connection with the
    driver's timeouts, kept between runs as the driver keeps its own,
    read from ``workers`` threads."""

    def __init__(self, emu: redfish_emulator.RedfishEmulator, conf: Any,
                 workers: int) -> None:
        import sushy
        from sushy import auth as sushy_auth
        self._sushy = sushy
        options = conf.redfish
        self.root = sushy.Sushy(
            emu.url, verify=emu.verify,
            auth=sushy_auth.BasicAuth(emu.username, emu.password),
            server_side_retries=options.server_side_retries,
            server_side_retries_delay=options.server_side_retries_delay,
            read_timeout=options.request_timeout,
            connect_timeout=options.connect_timeout)
        self.paths = ['/redfish/v1/Systems/%s' % uuid for uuid in emu.uuids]
        self.workers = workers

    def _read(self, path: str) -> bool:
        try:
            system = self.root.get_system(path)
            return bool(system.power_state == self._sushy.PowerState.OFF)
        except (self._sushy.exceptions.SushyError, OSError):
            return False

    def round(self) -> tuple[float, int]:
        started = time.perf_counter()
        with futures.ThreadPoolExecutor(max_workers=self.workers) as pool:
            answers = list(pool.map(self._read, self.paths))
        return time.perf_counter() - started, answers.count(False)


def _redfish(args: argparse.Namespace) -> dict[str, Any]:
    cores = os.cpu_count() or 1
    runs: dict[str, list[float]] = {'steady': [], 'record': [], 'bare': []}
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        emu = redfish_emulator.RedfishEmulator(
            pathlib.Path(tmp) / 'emulator', systems=args.systems)
        emu.start(timeout=300)
        try:
            svc = _conductor(os.path.join(tmp, 'state'), args.workers,
                             'redfish')
            try:
                ids = _enroll(svc, 'redfish', [
                    {'redfish_address': emu.url, 'redfish_system_id': uuid,
                     'redfish_username': emu.username,
                     'redfish_password': emu.password}
                    for uuid in emu.uuids])
                bare = _Bare(emu, svc.ctx.conf, args.workers)
                # Untimed first runs: imports, the connections, the states.
                failures += _ferrum_round(svc, ids, record=True)[1]
                failures += bare.round()[1]
                rounds = {'steady': lambda: _ferrum_round(svc, ids, False),
                          'record': lambda: _ferrum_round(svc, ids, True),
                          'bare': bare.round}
                for round_ in range(args.rounds):
                    order = list(rounds)
                    # Alternated, so that no kind always runs first.
                    for kind in order[round_ % 3:] + order[:round_ % 3]:
                        seconds, failed = rounds[kind]()
                        runs[kind].append(seconds)
                        failures += failed
            finally:
                svc.stop()
        finally:
            emu.stop()
    median = {kind: statistics.median(times) for kind, times in runs.items()}
    return {'benchmark': 'power_sync', 'driver': 'redfish',
            'systems': args.systems, 'workers': args.workers,
            'cores': cores, 'rounds': args.rounds,
            'seconds': round(median['steady'], 3),
            'bare_seconds': round(median['bare'], 3),
            'ratio': round(median['steady'] / median['bare'], 3),
            'recording_seconds': round(median['record'], 3),
            'recording_ratio': round(median['record'] / median['bare'], 3),
            'failures': failures,
            'runs': {kind: [round(t, 3) for t in times]
                     for kind, times in runs.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--driver', choices=('ipmi', 'redfish'),
                        default='ipmi')
    parser.add_argument('--bmcs', type=int, default=500,
                        help='ipmi: simulated BMCs (nodes)')
    parser.add_argument('--systems', type=int, default=200,
                        help='redfish: emulated Systems (nodes)')
    parser.add_argument('--rounds', type=int, default=3,
                        help='redfish: passes of each, alternated')
    parser.add_argument('--workers', type=int, default=8,
                        help='[conductor] sync_power_state_workers (and the '
                             'bare client\'s threads)')
    args = parser.parse_args()
    result = _redfish(args) if args.driver == 'redfish' else _ipmi(args)
    print(json.dumps(result))
    return 1 if result['failures'] else 0


if __name__ == '__main__':
    sys.exit(main())
