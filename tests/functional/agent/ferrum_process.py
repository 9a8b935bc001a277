# SPDX-License-Identifier: Apache-2.0
"""A ``ferrum`` all-in-one process for the real agent's tests, on a port
that stays the same when it is killed and started again (the agent keeps
the API URL it booted with), with an API client and the waits the tests
need."""

import os
import signal
import sqlite3
import subprocess
import time
from typing import Any

import pytest
import requests

from tests import process
from tests.functional import server

#: The API version the tests speak: history (1.78) and everything before.
HEADERS = {'X-OpenStack-Ironic-API-Version': '1.78'}
#: A deploy or a clean of a small loop disk takes seconds; on a loaded
#: 2-core machine much longer.
WAIT = 240.0


class Ferrum:
    """``ferrum`` on ``directory``: :meth:`start`, :meth:`kill` (SIGKILL),
    :meth:`stop` (SIGTERM)."""

    def __init__(self, directory: Any, conf: dict[str, dict[str, str]]):
        self.directory = directory
        self.port = process.free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.config = server.write_config(directory, self.port, conf)
        self.output = directory / 'ferrum.out'
        self.proc: subprocess.Popen[bytes] | None = None
        self.session = requests.Session()
        self.session.headers.update(HEADERS)

    def start(self) -> None:
        env = {key: value for key, value in os.environ.items()
               if key not in ('NOTIFY_SOCKET', 'LISTEN_PID', 'LISTEN_FDS')}
        with open(self.output, 'a') as out:
            self.proc = subprocess.Popen(
                [os.path.join(server.BIN, 'ferrum'), '--config-file',
                 str(self.config)], stdout=out, stderr=subprocess.STDOUT,
                env=env, cwd=self.directory)
        deadline = time.monotonic() + server.START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                pytest.fail('ferrum exited with %s:\n%s' % (
                    self.proc.returncode, self.log()[-4000:]))
            try:
                if self.session.get(self.url + '/v1',
                                    timeout=5).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                pytest.fail('ferrum did not start:\n%s' % self.log()[-4000:])
            time.sleep(0.05)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=server.STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def log(self) -> str:
        try:
            return self.output.read_text(errors='replace')
        except FileNotFoundError:
            return ''

    # ---- the API ------------------------------------------------------------

    def api(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.session.request(method, self.url + path, timeout=60,
                                    **kwargs)

    def node(self, ident: str) -> dict[str, Any]:
        response = self.api('GET', '/v1/nodes/%s' % ident)
        assert response.status_code == 200, response.text
        found: dict[str, Any] = response.json()
        return found

    def provision(self, ident: str, target: str, **body: Any) -> None:
        response = self.api('PUT', '/v1/nodes/%s/states/provision' % ident,
                            json=dict(body, target=target))
        assert response.status_code == 202, response.text

    def wait_state(self, ident: str, *wanted: str,
                   timeout: float = WAIT) -> dict[str, Any]:
        """The node once in one of ``wanted`` and unlocked; the test fails
        with its state, last_error and ferrum's log tail otherwise."""
        deadline = time.monotonic() + timeout
        node: dict[str, Any] = {}
        while time.monotonic() < deadline:
            try:
                node = self.node(ident)
            except requests.ConnectionError:
                node = {}
            if (node.get('provision_state') in wanted
                    and not node.get('reservation')):
                return node
            time.sleep(0.1)
        pytest.fail('node %s: %s after %.0fs, not %s; last_error: %s\n%s'
                    % (ident, node.get('provision_state'), timeout, wanted,
                       node.get('last_error'), self.log()[-6000:]))

    def wait_step(self, ident: str, step: str,
                  timeout: float = WAIT) -> dict[str, Any]:
        """The node once it waits for the agent in ``step``."""
        deadline = time.monotonic() + timeout
        node: dict[str, Any] = {}
        while time.monotonic() < deadline:
            node = self.node(ident)
            current = node.get('deploy_step') or node.get('clean_step') or {}
            if (node['provision_state'] in ('wait call-back', 'clean wait')
                    and current.get('step') == step):
                return node
            if node['provision_state'] in ('deploy failed', 'clean failed',
                                           'active', 'available'):
                break
            time.sleep(0.05)
        pytest.fail('node %s never waited in %s: %s, last_error %s'
                    % (ident, step, node.get('provision_state'),
                       node.get('last_error')))

    def token_of(self, ident: str) -> str | None:
        """The node's agent token, read from the database (the API never
        shows it)."""
        node_id = self.db_row('SELECT id FROM nodes WHERE uuid = ?', ident)
        if node_id is None:
            return None
        found = self.db_row('SELECT token FROM agent_tokens WHERE node_id = ?',
                            node_id)
        return None if found is None else str(found)

    def db_row(self, query: str, *args: Any) -> Any:
        path = self.directory / 'state' / 'ferrum.sqlite'
        with sqlite3.connect(str(path), timeout=30) as conn:
            row = conn.execute(query, args).fetchone()
        return None if row is None else row[0]
