# SPDX-License-Identifier: Apache-2.0
"""The real Placement, in-process through its own fixture, and a conductor
syncing to it.

``PlacementFixture`` is the fixture nova's functional tests use: the
Placement WSGI app on a fresh in-memory database, reached through
wsgi-intercept, which intercepts ``requests`` and so keystoneauth1.
"""

import os
import signal
import subprocess
import textwrap

import pytest
import requests
from keystoneauth1 import loading as ks_loading

from ferrum.conductor import service
from ferrum.inventory import audit
from ferrum.inventory import client as client_mod
from ferrum.inventory import outbox
from tests import process
from tests.conftest import require_real
from tests.conftest import wait_for
from tools import placement_server


def configure(conf, endpoint, token='admin'):
    """Point ``conf`` at a Placement running noauth2 (three options)."""
    conf.register_opts(ks_loading.get_auth_plugin_conf_options('admin_token'),
                       group='placement')
    conf.set_override('auth_type', 'admin_token', group='placement')
    conf.set_override('endpoint', endpoint, group='placement')
    conf.set_override('token', token, group='placement')


def killed_conductor_config(tmp_path, endpoint, db_url=''):
    """The config file of a conductor process a test kills: host
    ``killed-conductor``, the test's database (``db_url``, else SQLite in
    ``state_path``), log in ``conductor.log``, the placement allocation
    backend."""
    path = tmp_path / 'ferrum.conf'
    path.write_text(textwrap.dedent('''
        [DEFAULT]
        host = killed-conductor
        state_path = %(state)s
        log_file = %(log)s
        [conductor]
        heartbeat_interval = 1
        [allocation]
        backend = placement
        [placement]
        auth_type = admin_token
        endpoint = %(endpoint)s
        token = admin
        poll_interval = 0.02
        [database]
        connection = %(db_url)s
        ''' % {'state': tmp_path, 'log': tmp_path / 'conductor.log',
               'endpoint': endpoint, 'db_url': db_url}))
    return path


def command_config(tmp_path, conf):
    """A config file for ``ferrum-placement`` run with the test's database
    (``state_path``) and Placement, with the placement allocation
    backend."""
    path = tmp_path / 'ferrum.conf'
    path.write_text(
        '[DEFAULT]\nstate_path = %s\n[allocation]\nbackend = placement\n'
        '[placement]\nauth_type = admin_token\nendpoint = %s\n'
        'token = admin\n' % (tmp_path, conf.placement.endpoint))
    return str(path)


@pytest.fixture
def placement():
    try:
        from placement.tests.functional.fixtures import placement as fixture
    except ImportError:
        require_real('openstack-placement (pip install -e .[test])')
    running = fixture.PlacementFixture(token='admin')
    running.setUp()
    yield running
    running.cleanUp()


@pytest.fixture
def pconf(conf, placement):
    configure(conf, placement.endpoint)
    conf.set_override('poll_interval', 0.02, group='placement')
    conf.set_override('outage_retry_interval', 1, group='placement')
    # The fixture's in-memory database is one connection: one request at
    # a time (the gunicorn Placement serves the concurrent tests).
    conf.set_override('push_workers', 1, group='placement')
    return conf


@pytest.fixture
def pclient(pconf):
    """A second client, as an operator's tool or a foreign writer uses."""
    return client_mod.PlacementClient(pconf)


@pytest.fixture
def synced(pconf, db):
    """A conductor with Placement sync on (no periodic worker)."""
    svc = service.ConductorService(pconf, db=db)
    svc.start(start_periodics=False)
    yield svc
    svc.stop()


def converged(db, timeout=10.0):
    """Wait until every queued change was pushed."""
    wait_for(lambda: outbox.backlog(db).size == 0, timeout,
             what='the Placement outbox to drain')


def assert_no_drift(db, client):
    """The audit finds nothing: ferrum and Placement agree node by node."""
    assert audit.drift(db, client, deep=True) == []


def provider(client, uuid):
    """(inventories, traits) of a provider, or None."""
    inventories = client.get('/resource_providers/%s/inventories' % uuid,
                             not_found_ok=True)
    if inventories is None:
        return None
    traits = client.get('/resource_providers/%s/traits' % uuid)
    return inventories['inventories'], set(traits['traits'])


def reserved(client, uuid):
    inventories, _traits = provider(client, uuid)
    (fields,) = inventories.values()
    return fields['reserved']


class PlacementProcess:
    """The real Placement under gunicorn on loopback, killed and restarted
    on the same port and database (see tools/placement_server)."""

    def __init__(self, directory, db_url=None):
        self.directory = str(directory)
        self.db_url = db_url
        self.port = process.free_port()
        self.workers = 1
        self.proc = None

    @property
    def endpoint(self):
        return 'http://127.0.0.1:%d' % self.port

    def start(self):
        argv, env = placement_server.command(self.directory, self.port,
                                             self.db_url,
                                             workers=self.workers)
        log = open(os.path.join(self.directory, 'gunicorn.log'), 'ab')
        # A session of its own: SIGKILL must take gunicorn's workers down
        # with their master, or an orphaned worker goes on serving.
        self.proc = subprocess.Popen(argv, env=env, stdout=log,
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()

        def answers():
            if self.proc.poll() is not None:
                pytest.fail('Placement exited: see %s/gunicorn.log'
                            % self.directory)
            try:
                # The first request waits for the app's import.
                return requests.get(self.endpoint, timeout=10).ok
            except requests.RequestException:
                return False
        try:
            wait_for(answers, timeout=60, interval=0.1,
                     what='Placement to start')
        except BaseException:
            self.kill()
            raise

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the whole group is gone already
        self.proc.wait()


@pytest.fixture
def placement_process(tmp_path):
    try:
        import placement.wsgi  # noqa: F401
    except ImportError:
        require_real('openstack-placement (pip install -e .[test])')
    running = PlacementProcess(tmp_path / 'placement')
    running.start()
    yield running
    running.kill()
