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
(also printed on stderr, with the work directory) and ``{token}`` by the
token to send (empty under noauth: the benchmarks then send none); its
output passes through. Then one JSON line follows with the layout, the
auth strategy and the CPU seconds each process used while the command ran
(``cpu_s``), read from ``/proc``. The exit status is the last failing
command's, else 0.

``--auth keystone`` starts the real Keystone (``tools/keystone_server.py``,
SQLite, in the work directory) and runs ferrum with ``[DEFAULT]
auth_strategy = keystone``, its ``[keystone_authtoken]`` pointing at it
(and ``[json_rpc] auth_strategy = keystone`` between API and conductors);
the benchmark gets one system-admin token (``{token}``) and reuses it, as
a client does, and keystonemiddleware validates it once and then answers
from its in-process cache. ``--auth noauth,keystone,keystone,noauth`` runs
the command once per entry, a new deployment each time on the same
database (and the same Keystone), so the two strategies are measured
alternately in one run::

    .venv/bin/python tools/bench/deployment.py --throwaway-postgres \\
        --conductors 0 --auth noauth,keystone,keystone,noauth -- \\
        .venv/bin/python tools/bench/allocations.py --url {url} \\
        --token={token} --nodes 500 --concurrency 8
"""

import argparse
import contextlib
import json
import os
import pathlib
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import requests
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

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
                        headers: dict[str, str],
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
            drivers = requests.get(url + '/v1/drivers', timeout=5,
                                   headers=headers).json()
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


class Keystone:
    """The real Keystone on loopback: [DEFAULT] and [keystone_authtoken]
    for ferrum, and the benchmark's token."""

    #: Importing Keystone twice (set-up, then the gunicorn worker) takes
    #: tens of seconds on a loaded machine.
    START_TIMEOUT = 300.0

    def __init__(self, directory: pathlib.Path) -> None:
        self.directory = directory
        self.port = _free_port()
        self.auth_url = 'http://127.0.0.1:%d/v3' % self.port
        self.password = secrets.token_urlsafe(16)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / 'keystone.log', 'wb') as log:
            # A session of its own: stop() signals gunicorn's master and
            # workers together.
            self.proc = subprocess.Popen(
                [sys.executable,
                 str(_CHECKOUT / 'tools' / 'keystone_server.py'),
                 '--dir', str(self.directory), '--port', str(self.port)],
                env=dict(os.environ, OS_BOOTSTRAP_PASSWORD=self.password),
                stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + self.START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise SystemExit('Keystone exited with %s; see %s'
                                 % (self.proc.returncode, self.directory))
            with contextlib.suppress(requests.RequestException):
                # A timeout on every probe: a master whose worker is still
                # importing Keystone accepts and says nothing.
                if requests.get(self.auth_url, timeout=10).ok:
                    return
            if time.monotonic() > deadline:
                raise SystemExit('Keystone did not answer on %s within '
                                 '%.0f s' % (self.auth_url,
                                             self.START_TIMEOUT))
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def _admin(self) -> dict[str, str]:
        # The bootstrap admin, system-scoped: it may validate tokens and
        # do everything the benchmarks do (enroll, provision, allocate).
        return {'auth_url': self.auth_url, 'username': 'admin',
                'password': self.password, 'user_domain_id': 'default',
                'system_scope': 'all'}

    def token(self) -> str:
        auth = v3.Password(auth_url=self.auth_url, username='admin',
                           password=self.password,
                           user_domain_id='default', system_scope='all')
        return str(auth.get_token(ks_session.Session()))

    def options(self) -> dict[str, dict[str, str]]:
        """The API and, in the split layout, JSON-RPC under keystone: the
        conductors serve a system admin, which the API is here."""
        return {'DEFAULT': {'auth_strategy': 'keystone'},
                'keystone_authtoken': {
                    'www_authenticate_uri': self.auth_url,
                    'auth_type': 'password', 'interface': 'public',
                    **self._admin()},
                'json_rpc': {'auth_strategy': 'keystone',
                             'auth_type': 'password', **self._admin()}}


@contextlib.contextmanager
def _deployment(args: argparse.Namespace, database_url: str,
                workdir: pathlib.Path, token: str
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
        _wait_until_serving(url, list(procs.values()),
                            {'X-Auth-Token': token} if token else {})
        if token and requests.get(url + '/v1/drivers',
                                  timeout=30).status_code != 401:
            # Else the run would measure noauth under keystone's name.
            raise SystemExit('ferrum at %s answers without a token: '
                             'auth_strategy keystone is not in force' % url)
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
    parser.add_argument('--auth', default='noauth',
                        help='noauth or keystone, or a comma-separated '
                             'list of them: one deployment and one run of '
                             'the command each, in that order (default: '
                             '%(default)s)')
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

    strategies = args.auth.split(',')
    if not set(strategies) <= {'noauth', 'keystone'}:
        parser.error('--auth %s: each entry is noauth or keystone'
                     % args.auth)
    workdir = pathlib.Path(tempfile.mkdtemp(prefix='ferrum-deployment-'))
    status = 0
    with contextlib.ExitStack() as stack:
        database_url = (stack.enter_context(_throwaway_postgres())
                        if args.throwaway_postgres else args.database_url)
        keystone = None
        if 'keystone' in strategies:
            keystone = Keystone(workdir / 'keystone')
            stack.callback(keystone.stop)
            keystone.start()
        options = args.options
        for run, strategy in enumerate(strategies):
            token = ''
            args.options = options
            if strategy == 'keystone':
                assert keystone is not None
                token = keystone.token()
                args.options = {name: dict(values) for name, values
                                in keystone.options().items()}
                for name, values in options.items():
                    args.options.setdefault(name, {}).update(values)
            with _deployment(args, database_url, workdir / str(run),
                             token) as (url, procs):
                print('ferrum (%s, %s) serves %s; work directory %s' % (
                    ', '.join(procs), strategy, url, workdir),
                    file=sys.stderr, flush=True)
                before = {name: _cpu_seconds(proc.pid)
                          for name, proc in procs.items()}
                status = subprocess.call([
                    part.replace('{url}', url).replace('{token}', token)
                    for part in args.command]) or status
                used = {name: round(_cpu_seconds(proc.pid) - before[name],
                                    2)
                        for name, proc in procs.items()}
            print(json.dumps({'deployment': 'split' if args.conductors
                              else 'all-in-one', 'auth': strategy,
                              'conductors': args.conductors, 'cpu_s': used}),
                  flush=True)
    if args.keep:
        print('work directory: %s' % workdir, file=sys.stderr)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return status


if __name__ == '__main__':
    sys.exit(main())
