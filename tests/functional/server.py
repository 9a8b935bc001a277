# SPDX-License-Identifier: Apache-2.0
"""A real ``ferrum`` process serving the API, for tests that talk HTTP.

Usage::

    with running_ferrum(tmp_path) as url:
        requests.get(url + '/v1/nodes')

The process runs the installed console script (the one beside
``sys.executable``) on its own config file, state directory and free port.
The context manager returns once ``GET /v1`` answers 200, and on exit
sends SIGTERM and fails the test unless the process exits with 0. Its
output (logs included) is in ``tmp_path/ferrum.out`` and is quoted in
every failure.
"""

import configparser
import contextlib
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import requests

from tests import process

BIN = os.path.dirname(sys.executable)
START_TIMEOUT = 60.0
STOP_TIMEOUT = 60.0
#: Another process may take the free port before ferrum binds it.
_START_ATTEMPTS = 3
_PORT_TAKEN = 'Cannot serve the API on'


def write_config(tmp_path: pathlib.Path, port: int,
                 extra_conf: dict[str, dict[str, str]] | None = None,
                 database_url: str | None = None) -> pathlib.Path:
    """``tmp_path/ferrum.conf`` as :func:`running_ferrum` runs ferrum."""
    sections: dict[str, dict[str, str]] = {
        'DEFAULT': {'host': 'ferrum-under-test',
                    'state_path': str(tmp_path / 'state'),
                    'enabled_hardware_types': 'fake-hardware',
                    # The fake firmware interface on request, the default
                    # as Ironic's: the clients' firmware lists (1.86).
                    'enabled_firmware_interfaces': 'no-firmware,fake',
                    'default_firmware_interface': 'no-firmware'},
        'api': {'host_ip': '127.0.0.1', 'port': str(port)},
    }
    if database_url:
        sections['database'] = {'connection': database_url}
    for name, values in (extra_conf or {}).items():
        sections.setdefault(name, {}).update(values)
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keep option names' case
    parser.read_dict(sections)
    path = tmp_path / 'ferrum.conf'
    with open(path, 'w') as out:
        parser.write(out)
    return path


def _output(path: pathlib.Path, lines: int = 60) -> str:
    try:
        text = path.read_text(errors='replace')
    except FileNotFoundError:
        return '(no output)'
    return '\n'.join(text.splitlines()[-lines:])


def _wait_ready(proc: subprocess.Popen, url: str) -> bool:
    """True once GET /v1 answers 200; False if the process exited."""
    deadline = time.monotonic() + START_TIMEOUT
    while proc.poll() is None:
        try:
            if requests.get(url + '/v1', timeout=5).status_code == 200:
                return True
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline:
            pytest.fail('ferrum did not answer GET %s/v1 within %.0fs'
                        % (url, START_TIMEOUT))
        time.sleep(0.05)
    return False


@contextlib.contextmanager
def running_ferrum(tmp_path: pathlib.Path,
                   extra_conf: dict[str, dict[str, str]] | None = None,
                   database_url: str | None = None,
                   command: str = 'ferrum') -> Iterator[str]:
    """Run ``command`` (a ferrum console script) and yield its base URL.

    :param tmp_path: the test's directory: config, state and output go here.
    :param extra_conf: ``{section: {option: value}}`` added to (and
        overriding) the generated config file.
    :param database_url: ``[database] connection``, e.g. a ``pg_url``;
        the default is SQLite under ``tmp_path/state``.
    :param command: ``ferrum`` (upgrades the schema itself) or
        ``ferrum-api`` (needs an upgraded schema).
    :returns: a URL such as ``http://127.0.0.1:40123``, no trailing slash.
    """
    output = tmp_path / 'ferrum.out'
    # Not under the test runner's systemd: ferrum must not notify it.
    env = {key: value for key, value in os.environ.items()
           if key not in ('NOTIFY_SOCKET', 'LISTEN_PID', 'LISTEN_FDS')}
    for _attempt in range(_START_ATTEMPTS):
        port = process.free_port()
        config = write_config(tmp_path, port, extra_conf, database_url)
        url = 'http://127.0.0.1:%d' % port
        with open(output, 'w') as out, process.running(
                [os.path.join(BIN, command), '--config-file', str(config)],
                stdout=out, stderr=subprocess.STDOUT, env=env,
                cwd=tmp_path) as proc:
            if not _wait_ready(proc, url):
                if _PORT_TAKEN in _output(output):
                    continue
                pytest.fail('%s exited with %s before serving:\n%s'
                            % (command, proc.returncode, _output(output)))
            yield url
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pytest.fail('%s did not stop within %.0fs of SIGTERM:\n%s'
                            % (command, STOP_TIMEOUT, _output(output)))
            if code != 0:
                pytest.fail('%s exited with %d after SIGTERM:\n%s'
                            % (command, code, _output(output)))
            return
    pytest.fail('%s found its port taken %d times in a row:\n%s'
                % (command, _START_ATTEMPTS, _output(output)))
