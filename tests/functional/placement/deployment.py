# SPDX-License-Identifier: Apache-2.0
"""How the Placement tests set things up: ferrum pointed at a Placement,
the config files of the processes they start, and the real Placement
under gunicorn (the fixtures that use these are in conftest.py)."""

import os
import signal
import subprocess
import textwrap
import threading

import pytest
import requests
from keystoneauth1 import loading as ks_loading

from tests import process
from tests.polling import wait_for
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


def one_at_a_time(app):
    """The WSGI ``app``, serving one request at a time (as gunicorn with
    one sync worker does): the in-process Placement's in-memory database
    is one connection that concurrent requests would share."""
    lock = threading.Lock()

    def serialised(environ, start_response):
        with lock:
            return list(app(environ, start_response))

    return serialised
