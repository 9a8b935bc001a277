# SPDX-License-Identifier: Apache-2.0
"""``ferrum-placement`` run as an operator would: from any directory, with
or without ``--config-file``."""

import json
import os
import subprocess
import sys

import pytest

from ferrum import conf as ferrum_conf
from ferrum.db import api as db_api
from ferrum.db import migration

BIN = os.path.dirname(sys.executable)


@pytest.fixture
def home(tmp_path):
    """An empty home directory, and a working directory outside the
    repository; the machine's /etc must hold no ferrum.conf."""
    for path in ('/etc/ferrum/ferrum.conf', '/etc/ferrum.conf'):
        if os.path.exists(path):
            pytest.skip('%s exists on this machine' % path)
    (tmp_path / 'home').mkdir()
    (tmp_path / 'cwd').mkdir()
    return tmp_path


def _placement(home, *args):
    env = dict(os.environ, HOME=str(home / 'home'))
    return subprocess.run([os.path.join(BIN, 'ferrum-placement'), *args],
                          capture_output=True, text=True, timeout=120,
                          cwd=home / 'cwd', env=env)


def test_no_config_and_no_database_is_one_line_and_leaves_nothing(home):
    result = _placement(home, 'status')
    assert result.returncode == 2, result.stderr
    assert 'Traceback' not in result.stderr
    first, last = result.stderr.strip().splitlines()
    assert first.startswith('ferrum-placement: no config file was read')
    assert "Pass the service's --config-file." in first
    assert last == (
        'ferrum-placement cannot start: Cannot use the database '
        'sqlite:///%s/.ferrum/ferrum.sqlite: there is no such file. Give '
        'the config file of the service that uses it (--config-file), or '
        'create it with "ferrum-dbsync upgrade"' % (home / 'cwd'))
    assert result.stdout == ''
    assert os.listdir(home / 'cwd') == []


def _config(home, where, placement=True):
    state = home / 'state'
    state.mkdir(exist_ok=True)
    text = '[DEFAULT]\nstate_path = %s\n' % state
    if placement:
        text += ('[placement]\nauth_type = admin_token\n'
                 'endpoint = http://127.0.0.1:9/placement\ntoken = admin\n')
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(text)
    return where


def test_the_config_file_is_found_where_oslo_config_looks(home):
    config = _config(home, home / 'home' / '.ferrum' / 'ferrum.conf')
    db = db_api.Database(ferrum_conf.new_conf(['--config-file', str(config)]))
    try:
        migration.upgrade(db.engine)
    finally:
        db.dispose()
    result = _placement(home, 'status')
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)['enabled'] is True
    assert result.stderr == ''
    assert os.listdir(home / 'cwd') == []


def test_a_database_without_schema_is_named(home):
    config = _config(home, home / 'ferrum.conf', placement=False)
    (home / 'state' / 'ferrum.sqlite').touch()
    result = _placement(home, '--config-file', str(config), 'audit')
    assert result.returncode == 2, result.stderr
    assert 'Traceback' not in result.stderr
    assert result.stderr.strip() == (
        'The database at sqlite:///%s is at schema revision None but this '
        'ferrum needs %s; run "ferrum-dbsync upgrade".'
        % (home / 'state' / 'ferrum.sqlite', migration.head()))
