# SPDX-License-Identifier: Apache-2.0
"""pytest plugin: the real Keystone on loopback, with issue 28's personas.

Why the real service: what ferrum's tenancy relies on is Keystone's and
keystonemiddleware's behaviour (implied roles, system scope, which headers
the middleware sets and strips, 401 and 503), and a stand-in would only
echo our own assumptions back.

``keystone`` (session) starts Keystone from PyPI under gunicorn
(``tools/keystone_server.py``, SQLite in a temporary directory, a free
port) the first time a test asks for it, and creates:

- the system personas ``system-admin`` (Keystone's bootstrap ``admin``),
  ``system-member`` and ``system-reader``, with system-scoped tokens;
- projects ``owner``, ``lessee`` and ``third`` with users
  ``<project>-admin``, ``-member`` and ``-reader`` (project-scoped);
- ``service``: user ``ferrum`` with the ``service`` role in project
  ``service``, the account keystonemiddleware validates tokens with
  (:meth:`Keystone.authtoken_options`).

:meth:`Keystone.stop` and :meth:`Keystone.start` take it down and bring it
back on the same port, database and keys (tokens stay valid): a test that
stops it starts it again before it ends.

When the ``keystone`` package is missing, or Keystone does not start, the
test is skipped, or fails under ``FERRUM_REQUIRE_REAL=1``.
"""

from __future__ import annotations

import atexit
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from tests import process
from tests.real import require_real
from tools import keystone_server

PROJECTS = ('owner', 'lessee', 'third')
ROLES = ('admin', 'member', 'reader')
SERVICE_USER = 'ferrum'
SERVICE_PROJECT = 'service'
SYSTEM_ADMIN = 'system-admin'
# Generous: the first start imports Keystone twice (set-up, then the
# gunicorn worker), which takes tens of seconds on a loaded machine.
_START_TIMEOUT = 240.0
_STOP_TIMEOUT = 60.0

#: persona -> (user name, project name or None for system scope, role)
PERSONAS: dict[str, tuple[str, str | None, str]] = {
    SYSTEM_ADMIN: (keystone_server.ADMIN, None, 'admin'),
    'system-member': ('system-member', None, 'member'),
    'system-reader': ('system-reader', None, 'reader'),
    **{'%s-%s' % (project, role): ('%s-%s' % (project, role), project, role)
       for project in PROJECTS for role in ROLES},
    'service': (SERVICE_USER, SERVICE_PROJECT, 'service'),
}


class KeystoneError(RuntimeError):
    """Keystone did not start or stop."""


class Keystone:
    """One Keystone process on loopback and its personas."""

    def __init__(self, directory: str, db_url: str | None = None) -> None:
        self.directory = directory
        #: None for SQLite in ``directory``.
        self.db_url = db_url
        self.port = process.free_port(keystone_server.HOST)
        #: One password for every persona, new for each session. It begins
        #: with '-' on purpose: one in 64 random ones does, and such a
        #: password once broke Keystone's bootstrap command line.
        self.password = '-' + secrets.token_urlsafe(16)
        self.project_ids: dict[str, str] = {}
        self.user_ids: dict[str, str] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self._set_up = False
        self._sessions: dict[str, ks_session.Session] = {}

    @property
    def url(self) -> str:
        """The ``www_authenticate_uri``: where clients are sent."""
        return 'http://%s:%d' % (keystone_server.HOST, self.port)

    @property
    def auth_url(self) -> str:
        return keystone_server.auth_url(self.port)

    @property
    def log_file(self) -> str:
        return os.path.join(self.directory, 'keystone.log')

    # -- the process ------------------------------------------------------

    def start(self) -> None:
        """Start Keystone and wait until it answers: the first time set it
        up (tools/keystone_server.py); later on the same port, database
        and keys, so earlier tokens stay valid."""
        if self._proc is not None and self._proc.poll() is None:
            raise KeystoneError('Keystone is already running')
        if not self._set_up:
            argv = [keystone_python(), keystone_server.__file__,
                    '--dir', self.directory, '--port', str(self.port)]
            if self.db_url:
                argv += ['--db-url', self.db_url]
            env = dict(os.environ, OS_BOOTSTRAP_PASSWORD=self.password)
        else:
            argv, env = keystone_server.command(
                self.directory, self.port, self.db_url,
                python=keystone_python())
        with open(self.log_file, 'ab') as log:
            # A session of its own: stop() signals gunicorn's master and
            # workers together.
            self._proc = subprocess.Popen(
                argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self._set_up = True

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            if self._proc.poll() is not None:
                raise KeystoneError('Keystone exited (%s)\n--- log ---\n%s'
                                    % (self._proc.returncode,
                                       self.log_tail()))
            try:
                # A timeout on every probe: a master whose worker is still
                # importing Keystone accepts the connection and says
                # nothing.
                if requests.get(self.auth_url, timeout=10).ok:
                    return
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise KeystoneError(
                    'Keystone did not answer on %s within %.0fs\n'
                    '--- log ---\n%s' % (self.auth_url, _START_TIMEOUT,
                                         self.log_tail()))
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop gunicorn (master and workers). Idempotent."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            proc.wait()  # the whole group is gone already

    def log_tail(self, lines: int = 40) -> str:
        try:
            with open(self.log_file, errors='replace') as log:
                return ''.join(log.readlines()[-lines:])
        except OSError:
            return '(no log)'

    # -- personas ---------------------------------------------------------

    def auth(self, persona: str) -> v3.Password:
        """A password auth plugin for ``persona``, scoped as it is."""
        user, project, _role = PERSONAS[persona]
        password = self.password
        scope: dict[str, Any]
        if project is None:
            scope = {'system_scope': 'all'}
        else:
            scope = {'project_name': project,
                     'project_domain_id': 'default'}
        return v3.Password(auth_url=self.auth_url, username=user,
                           password=password, user_domain_id='default',
                           **scope)

    def session(self, persona: str) -> ks_session.Session:
        """The persona's keystoneauth1 session (one per persona, its token
        fetched once and reused)."""
        if persona not in self._sessions:
            self._sessions[persona] = ks_session.Session(
                auth=self.auth(persona))
        return self._sessions[persona]

    def token(self, persona: str) -> str:
        token: str = self.session(persona).get_token()
        return token

    def new_token(self, persona: str) -> str:
        """A token issued now, which no service has seen (keystonemiddleware
        caches the ones it validated)."""
        token: str = self.auth(persona).get_token(ks_session.Session())
        return token

    def authtoken_options(self) -> dict[str, str]:
        """``[keystone_authtoken]`` for a service validating tokens as the
        ``service`` persona (interface public, as Keystone's catalog is
        the same URL for every interface)."""
        return {'www_authenticate_uri': self.url,
                'auth_url': self.auth_url,
                'auth_type': 'password',
                'username': SERVICE_USER,
                'password': self.password,
                'user_domain_id': 'default',
                'project_name': SERVICE_PROJECT,
                'project_domain_id': 'default',
                'interface': 'public'}

    def create_personas(self) -> None:
        """The projects, users and role assignments of :data:`PERSONAS`,
        created through Keystone's API by the system admin."""
        admin = self.session(SYSTEM_ADMIN)
        base = self.auth_url

        roles = {role['name']: role['id']
                 for role in admin.get(base + '/roles').json()['roles']}
        for project in PROJECTS + (SERVICE_PROJECT,):
            body = {'project': {'name': project, 'domain_id': 'default'}}
            self.project_ids[project] = admin.post(
                base + '/projects', json=body).json()['project']['id']
        for persona, (user, project, role) in PERSONAS.items():
            if persona == SYSTEM_ADMIN:
                continue  # bootstrap made it
            body = {'user': {'name': user, 'domain_id': 'default',
                             'password': self.password}}
            if project is not None:
                body['user']['default_project_id'] = self.project_ids[
                    project]
            user_id = admin.post(base + '/users',
                                 json=body).json()['user']['id']
            self.user_ids[persona] = user_id
            if project is None:
                target = '/system/users/%s/roles/%s' % (user_id, roles[role])
            else:
                target = '/projects/%s/users/%s/roles/%s' % (
                    self.project_ids[project], user_id, roles[role])
            admin.put(base + target)


def keystone_python() -> str:
    """The interpreter of the environment Keystone is installed in.

    Keystone runs from a virtualenv of its own (``make test`` makes
    ``.venv-keystone``): it brings eventlet (through oslo.service), whose
    mere presence makes futurist warn on standard error in every ferrum
    process, and ferrum's own environment should hold what ferrum's
    users install. ``FERRUM_KEYSTONE_PYTHON`` points elsewhere.
    """
    configured = os.environ.get('FERRUM_KEYSTONE_PYTHON')
    if configured:
        return configured
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    own = os.path.join(repo, '.venv-keystone', 'bin', 'python')
    return own if os.path.exists(own) else sys.executable


def require_keystone() -> None:
    """Skip (or fail, see require_real) unless Keystone can be run."""
    python = keystone_python()
    found = subprocess.run(
        [python, '-c', 'import importlib.util, sys; sys.exit(not all('
         'importlib.util.find_spec(m) for m in ("keystone", "gunicorn")))'],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    if found.returncode != 0:
        require_real('Keystone and gunicorn in %s (make test installs them '
                     'in .venv-keystone)' % python)


@pytest.fixture(scope='session')
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keystone]:
    """The running Keystone with its personas, for the whole session."""
    require_keystone()
    server = Keystone(str(tmp_path_factory.mktemp('keystone')))
    # Session teardown normally stops it; atexit covers an aborted run.
    atexit.register(server.stop)
    try:
        try:
            server.start()
            server.create_personas()
        except KeystoneError as exc:
            require_real('Keystone (%s)' % exc)
        yield server
    finally:
        atexit.unregister(server.stop)
        server.stop()
