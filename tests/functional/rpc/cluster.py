# SPDX-License-Identifier: Apache-2.0
"""Real ``ferrum-conductor`` and ``ferrum-api`` processes on one PostgreSQL.

Each process runs the installed console script on its own config file and
directory under the test's ``tmp_path``; its output (logs included) goes
to a file that failures quote.
"""

import contextlib
import os
import pathlib
import signal
import subprocess
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from ferrum.db import api as db_api
from ferrum.objects import conductor as conductor_obj
from tests import process
from tests.functional import server
from tests.polling import wait_for

BIN = os.path.dirname(sys.executable)
HEADERS = {'X-OpenStack-Ironic-API-Version': 'latest'}
#: What every process of the deployment shares; tests add to it.
JSON_RPC = {'DEFAULT': {'rpc_transport': 'json-rpc',
                        'hash_ring_reset_interval': '1'},
            'conductor': {'heartbeat_interval': '1',
                          'heartbeat_timeout': '5'}}


def output(path: pathlib.Path) -> str:
    return path.read_text(errors='replace')[-4000:] if path.exists() else ''


def merged(*configs: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The sections of ``configs``, later ones overriding earlier ones."""
    result: dict[str, dict[str, str]] = {}
    for config in configs:
        for name, values in config.items():
            result.setdefault(name, {}).update(values)
    return result


def upgrade(tmp_path: pathlib.Path, pg_url: str) -> None:
    """``ferrum-dbsync upgrade`` on the deployment's database."""
    subprocess.run([os.path.join(BIN, 'ferrum-dbsync'), '--config-file',
                    str(server.write_config(tmp_path, 0, None, pg_url)),
                    'upgrade'], check=True, capture_output=True)


@contextlib.contextmanager
def conductor(tmp_path: pathlib.Path, pg_url: str, host: str,
              extra: dict[str, dict[str, str]] | None = None
              ) -> Iterator[tuple[subprocess.Popen, pathlib.Path]]:
    """A ``ferrum-conductor`` named ``host``: (process, output file).

    Still running at the end, it gets SIGTERM and must exit with 0.
    """
    workdir = tmp_path / host
    workdir.mkdir()
    config = server.write_config(workdir, 0, merged(
        JSON_RPC, extra or {}, {'DEFAULT': {'host': host},
                                'json_rpc': {'port': str(
                                    process.free_port())}}), pg_url)
    out_path = workdir / 'conductor.out'
    with open(out_path, 'w') as out, process.running(
            [os.path.join(BIN, 'ferrum-conductor'), '--config-file',
             str(config)], stdout=out, stderr=subprocess.STDOUT,
            cwd=workdir) as proc:
        yield proc, out_path
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, output(out_path)


def wait_registered(db: db_api.Database,
                    procs: dict[str, tuple[subprocess.Popen, pathlib.Path]],
                    heartbeat_timeout: int) -> None:
    """Until every conductor in ``procs`` is registered and alive."""
    def registered() -> bool:
        for proc, out_path in procs.values():
            assert proc.poll() is None, output(out_path)
        return set(conductor_obj.alive_drivers(
            db, heartbeat_timeout)) == set(procs)
    wait_for(registered, timeout=60, what='%s registered' % sorted(procs))


@contextlib.contextmanager
def api(tmp_path: pathlib.Path, pg_url: str,
        extra: dict[str, dict[str, str]] | None = None) -> Iterator[str]:
    """A ``ferrum-api`` on the json-rpc transport; yields its URL."""
    api_dir = tmp_path / 'api'
    api_dir.mkdir()
    with server.running_ferrum(
            api_dir, merged(JSON_RPC, extra or {},
                            {'DEFAULT': {'host': 'the-api'}}),
            pg_url, command='ferrum-api') as url:
        yield url


@contextlib.contextmanager
def running(tmp_path: pathlib.Path, conf: Any, pg_url: str,
            hosts: Iterable[str],
            extra: dict[str, dict[str, str]] | None = None
            ) -> Iterator[tuple[str, dict[str, tuple[subprocess.Popen,
                                                     pathlib.Path]],
                                db_api.Database]]:
    """The deployment: (API URL, conductor processes by host, database).

    :param extra: config sections added to every process's file.
    """
    upgrade(tmp_path, pg_url)
    db = db_api.Database(conf, url=pg_url)
    timeout = int(merged(JSON_RPC, extra or {})['conductor'][
        'heartbeat_timeout'])
    try:
        with contextlib.ExitStack() as stack:
            procs = {host: stack.enter_context(
                         conductor(tmp_path, pg_url, host, extra))
                     for host in hosts}
            wait_registered(db, procs, timeout)
            url = stack.enter_context(api(tmp_path, pg_url, extra))
            yield url, procs, db
    finally:
        db.dispose()
