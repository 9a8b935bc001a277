#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Start a ferrum deployment on loopback, run a benchmark against it, stop it.

The same launcher starts both layouts the scale-out figures compare, so
they differ only in the layout:

* ``--conductors 0``: one all-in-one ``ferrum`` process;
* ``--conductors N``: N ``ferrum-conductor`` processes and one
  ``ferrum-api``, talking JSON-RPC (``rpc_transport = json-rpc``).

All on one database: ``--database-url``, or ``--throwaway-postgres`` for a
PostgreSQL cluster of its own (needs a ferrum checkout, it reuses the test
suite's launcher). Example::

    .venv/bin/python tools/bench/deployment.py --throwaway-postgres \\
        --conductors 2 -- \\
        .venv/bin/python tools/bench/allocations.py --url {url} \\
        --nodes 1000 --concurrency 8

The command after ``--`` runs with ``{url}`` replaced by the API's URL
(also printed on stderr, with the work directory); its output passes
through. Then one JSON line follows with the layout and the
CPU seconds each process used while the command ran
(``cpu_s``), read from ``/proc``. The exit status is the command's.
"""

import argparse
import contextlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import requests

_BIN = os.path.dirname(sys.executable)
_CHECKOUT = pathlib.Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port: int = sock.getsockname()[1]
        return port


def _write_config(directory: pathlib.Path, host: str, database_url: str,
                  sections: dict[str, dict[str, str]],
                  options: dict[str, dict[str, str]]) -> pathlib.Path:
    base: dict[str, dict[str, str]] = {
        'DEFAULT': {'host': host, 'state_path': str(directory),
                    'enabled_hardware_types': 'fake-hardware'},
        'conductor': {'sync_power_state_interval': '0'},
        'database': {'connection': database_url}}
    for extra in (sections, options):
        for name, values in extra.items():
            base.setdefault(name, {}).update(values)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / 'ferrum.conf'
    path.write_text(''.join(
        '[%s]\n%s\n' % (name, ''.join('%s = %s\n' % item
                                       for item in values.items()))
        for name, values in base.items()))
    return path


def _cpu_seconds(pid: int) -> float:
    fields = pathlib.Path('/proc/%d/stat' % pid).read_text().rsplit(
        ')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def _wait_until_serving(url: str, procs: list[subprocess.Popen[bytes]],
                        timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        for proc in procs:
            if proc.poll() is not None:
                raise SystemExit('%s exited with %s; see its log in the '
                                 'work directory'
                                 % (proc.args, proc.returncode))
        with contextlib.suppress(requests.RequestException):
            # Node creation needs a registered conductor, not only the API.
            drivers = requests.get(url + '/v1/drivers', timeout=5).json()
            if drivers.get('drivers'):
                return
        if time.monotonic() > deadline:
            raise SystemExit('ferrum did not serve %s within %.0f s'
                             % (url, timeout))
        time.sleep(0.2)


@contextlib.contextmanager
def _throwaway_postgres() -> Iterator[str]:
    sys.path.insert(0, str(_CHECKOUT))
    from tests import postgres  # a ferrum checkout's test launcher

    bindir = postgres.find_bindir()
    if bindir is None:
        raise SystemExit('--throwaway-postgres: no PostgreSQL server '
                         'binaries found; install postgresql')
    server = postgres.PostgresServer.create(bindir, postgres._run_as())
    try:
        server.start()
        server.create_database('bench')
        yield server.url('bench')
    finally:
        server.close()


@contextlib.contextmanager
def _deployment(args: argparse.Namespace, database_url: str,
                workdir: pathlib.Path
                ) -> Iterator[tuple[str, dict[str, subprocess.Popen[bytes]]]]:
    port = _free_port()
    api = {'api': {'host_ip': '127.0.0.1', 'port': str(port)}}
    split = {'DEFAULT': {'rpc_transport': 'json-rpc'}}
    subprocess.run([os.path.join(_BIN, 'ferrum-dbsync'), '--config-file',
                    str(_write_config(workdir / 'dbsync', 'dbsync',
                                      database_url, {}, {})), 'upgrade'],
                   check=True, capture_output=True)
    commands: dict[str, list[str]] = {}
    for index in range(1, args.conductors + 1):
        host = 'conductor-%d' % index
        config = _write_config(workdir / host, host, database_url, dict(
            split, json_rpc={'host_ip': '127.0.0.1',
                             'port': str(_free_port())}), args.options)
        commands[host] = ['ferrum-conductor', '--config-file', str(config)]
    if args.conductors:
        config = _write_config(workdir / 'api', 'the-api', database_url,
                               dict(split, **api), args.options)
        commands['api'] = ['ferrum-api', '--config-file', str(config)]
    else:
        config = _write_config(workdir / 'all-in-one', 'all-in-one',
                               database_url, api, args.options)
        commands['all-in-one'] = ['ferrum', '--config-file', str(config)]
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name, command in commands.items():
            log = open(workdir / (name + '.log'), 'wb')
            procs[name] = subprocess.Popen(
                [os.path.join(_BIN, command[0])] + command[1:],
                stdout=log, stderr=subprocess.STDOUT)
            log.close()
        url = 'http://127.0.0.1:%d' % port
        _wait_until_serving(url, list(procs.values()))
        yield url, procs
    finally:
        for proc in procs.values():
            proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--conductors', type=int, default=2,
                        help='ferrum-conductor processes; 0 runs the '
                             'all-in-one ferrum instead (default: 2)')
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument('--database-url',
                        help='an empty database, e.g. postgresql+psycopg2:'
                             '//ferrum:secret@127.0.0.1/bench')
    source.add_argument('--throwaway-postgres', action='store_true',
                        help='start a PostgreSQL cluster for this run')
    parser.add_argument('--set', action='append', default=[],
                        metavar='GROUP.OPTION=VALUE',
                        help='an option for every process\'s config file, '
                             'e.g. api.threads=4 or conductor.'
                             'action_wait_timeout=0; may be repeated')
    parser.add_argument('--keep', action='store_true',
                        help='keep the work directory (configs and logs)')
    parser.add_argument('command', nargs='+',
                        help='the benchmark to run, after "--"; {url} is '
                             'replaced by the API URL')
    args = parser.parse_args()
    if args.conductors < 0:
        parser.error('--conductors must be 0 or more')
    args.options = {}
    for setting in args.set:
        name, equals, value = setting.partition('=')
        group, dot, option = name.rpartition('.')
        if not (equals and dot and group and option):
            parser.error('--set %s: write GROUP.OPTION=VALUE, e.g. '
                         'api.threads=4' % setting)
        args.options.setdefault(group, {})[option] = value

    workdir = pathlib.Path(tempfile.mkdtemp(prefix='ferrum-deployment-'))
    with contextlib.ExitStack() as stack:
        database_url = (stack.enter_context(_throwaway_postgres())
                        if args.throwaway_postgres else args.database_url)
        url, procs = stack.enter_context(
            _deployment(args, database_url, workdir))
        print('ferrum (%s) serves %s; work directory %s' % (
            ', '.join(procs), url, workdir), file=sys.stderr, flush=True)
        before = {name: _cpu_seconds(proc.pid)
                  for name, proc in procs.items()}
        status = subprocess.call([part.replace('{url}', url)
                                  for part in args.command])
        used = {name: round(_cpu_seconds(proc.pid) - before[name], 2)
                for name, proc in procs.items()}
        print(json.dumps({'deployment': 'split' if args.conductors
                          else 'all-in-one',
                          'conductors': args.conductors, 'cpu_s': used}))
    if args.keep:
        print('work directory: %s' % workdir, file=sys.stderr)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return status


if __name__ == '__main__':
    sys.exit(main())
