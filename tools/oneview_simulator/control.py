# SPDX-License-Identifier: Apache-2.0
"""Start ``ovsim.py`` as a child process and steer it through ``/admin``.

Stdlib only, so tests and benchmarks can use it without importing the
simulator (or hpOneView) into their own process::

    sim = OneViewSimulator(tmp_dir, hardware=16)
    sim.start()
    sim.take(sim.hardware_uris()[0])
    ...
    sim.stop()
"""

import json
import pathlib
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

SIMULATOR = pathlib.Path(__file__).resolve().parent / 'ovsim.py'


class OneViewSimulator:
    """One ``ovsim.py`` process: its address, CA file, credentials.

    :ivar address: ``"127.0.0.1:PORT"``, what hpOneView's config ``ip`` wants.
    :ivar ca_file: the CA bundle to pass as hpOneView's ``ssl_certificate``.
    :ivar username: / :ivar password: the appliance's one account.
    """

    def __init__(self, work_dir: pathlib.Path, hardware: int = 8,
                 username: str = 'Administrator',
                 password: str = 'ferrum-sim', page_size: int = 500,
                 session_timeout: float = 0.0, verbose: bool = False
                 ) -> None:
        self.work_dir = pathlib.Path(work_dir)
        self.initial_hardware = hardware
        self.username, self.password = username, password
        self.page_size = page_size
        self.session_timeout = session_timeout
        self.verbose = verbose
        self.address = ''
        self.ca_file = ''
        self._proc: subprocess.Popen[str] | None = None
        self._context: ssl.SSLContext | None = None
        self._state: dict[str, Any] = {}

    # ---- process -----------------------------------------------------------

    def start(self) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.work_dir / 'ovsim.log', 'w')
        argv = [sys.executable, str(SIMULATOR), '--port', '0',
                '--hardware', str(self.initial_hardware),
                '--cert-dir', str(self.work_dir),
                '--username', self.username, '--password', self.password,
                '--page-size', str(self.page_size),
                '--session-timeout', str(self.session_timeout)]
        if self.verbose:
            argv.append('--verbose')
        # stderr to a file: a pipe nobody reads would block the simulator.
        self._proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                      stderr=log, text=True,
                                      stdin=subprocess.DEVNULL)
        log.close()
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()  # READY, or EOF if it died
        if not line.startswith('READY '):
            self.stop()
            raise RuntimeError('the OneView simulator did not start: %r %s'
                               % (line, self.output()[-2000:]))
        _ready, self.address, self.ca_file = line.split()
        self._context = ssl.create_default_context(cafile=self.ca_file)
        self._context.check_hostname = False
        self._state = self.state()

    def stop(self, timeout: float = 10.0) -> None:
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def output(self) -> str:
        """What the simulator logged on stderr so far."""
        path = self.work_dir / 'ovsim.log'
        return path.read_text() if path.exists() else ''

    # ---- admin API ---------------------------------------------------------

    def admin(self, method: str, path: str, body: Any = None,
              timeout: float = 30.0) -> Any:
        """One ``/admin`` call; the decoded JSON answer (None for 204)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            'https://%s%s' % (self.address, path), data=data, method=method,
            headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(request, timeout=timeout,
                                        context=self._context) as answer:
                raw = answer.read()
        except urllib.error.HTTPError as error:
            raise RuntimeError('%s %s: %s %s' % (
                method, path, error.code,
                error.read()[:500].decode('utf-8', 'replace'))) from None
        return json.loads(raw) if raw else None

    def reset(self, hardware: int | None = None,
              page_size: int | None = None) -> dict[str, Any]:
        """New hardware (default: as many as at start), no profiles, no
        faults, no sessions, zero request counts. Returns ``state()``."""
        body: dict[str, Any] = {'hardware': self.initial_hardware
                                if hardware is None else hardware}
        if page_size is not None:
            body['page_size'] = page_size
        self._state = self.admin('POST', '/admin/reset', body)
        return self._state

    def state(self) -> dict[str, Any]:
        """Hardware (power, profile), profiles, recent tasks, faults, and
        the requests a hang_request fault holds (``hanging``)."""
        return self.admin('GET', '/admin/state')  # type: ignore[no-any-return]

    def hardware_uris(self) -> list[str]:
        return [sh['uri'] for sh in self.state()['hardware']]

    def hardware(self, uri: str) -> dict[str, Any]:
        """One hardware's compact state (power, serverProfileUri, state)."""
        return next(sh for sh in self.state()['hardware']
                    if sh['uri'] == uri)

    @property
    def template_uri(self) -> str:
        """The server profile template compatible with every hardware."""
        return self.templates['compatible']

    @property
    def incompatible_template_uri(self) -> str:
        """A template for another hardware type and enclosure group."""
        return self.templates['incompatible']

    @property
    def templates(self) -> dict[str, str]:
        """Template URIs by key: compatible, incompatible, virtual_mac
        (macType Virtual), unmanaged_boot (boot.manageBoot false)."""
        return dict(self._state['templates'])

    @property
    def server_hardware_type_uri(self) -> str:
        return str(self._state['server_hardware_types'][0])

    @property
    def enclosure_group_uri(self) -> str:
        return str(self._state['enclosure_groups'][0])

    def take(self, hw_uri: str) -> dict[str, Any]:
        """A OneView user applies their own profile to this hardware."""
        return self.admin(  # type: ignore[no-any-return]
            'POST', '/admin/server-hardware/%s/take' % _id(hw_uri))

    def free(self, hw_uri: str) -> dict[str, Any]:
        """Whatever profile this hardware has is removed at once."""
        return self.admin(  # type: ignore[no-any-return]
            'POST', '/admin/server-hardware/%s/free' % _id(hw_uri))

    def fault(self, kind: str, **params: Any) -> None:
        """Inject a fault: appliance_down [mode=reset, seconds],
        task_error [match, count, error_code, message], slow_task
        seconds [match], hang_request seconds [match, count],
        expire_sessions."""
        self.admin('POST', '/admin/faults', dict(params, kind=kind))

    def clear_faults(self) -> None:
        self.admin('DELETE', '/admin/faults')

    def request_counts(self) -> dict[str, Any]:
        """``{"total": n, "requests": {"GET /rest/server-hardware": k}}``."""
        return self.admin('GET', '/admin/requests')  # type: ignore

    def reset_request_counts(self) -> None:
        self.admin('DELETE', '/admin/requests')

    def client_config(self, api_version: int = 800,
                      timeout: float = 10.0) -> dict[str, Any]:
        """A config dict for ``hpOneView.oneview_client.OneViewClient``."""
        return {'ip': self.address,
                'credentials': {'userName': self.username,
                                'password': self.password},
                'api_version': api_version,
                'ssl_certificate': self.ca_file,
                'timeout': timeout}

    def ferrum_options(self) -> dict[str, Any]:
        """ferrum's ``[oneview]`` options for this simulator."""
        return {'manager_url': self.address, 'username': self.username,
                'password': self.password, 'tls_cacert_file': self.ca_file}


def _id(uri: str) -> str:
    return uri.rstrip('/').rsplit('/', 1)[-1]
