# SPDX-License-Identifier: Apache-2.0
"""Start-up mistakes in the config file, through the real console scripts.

Each mistake stops every program at start with exit status 1 and one line
on standard error naming the option or the database, never a traceback;
an unknown option name is a warning and the program runs.
"""

import importlib.util
import os
import socket
import subprocess
import sys

import pytest
import requests

from tests.functional import server

BIN = os.path.dirname(sys.executable)
SCRIPTS = ['ferrum', 'ferrum-api', 'ferrum-conductor', 'ferrum-dbsync']
SECRET = 'sekrit-pw'


def _run(tmp_path, command, extra, env=None):
    config = server.write_config(tmp_path, 0, extra)
    args = [os.path.join(BIN, command), '--config-file', str(config)]
    if command == 'ferrum-dbsync':
        args.append('upgrade')
    # A program that did not stop would be killed by the timeout: the
    # retry budget below is 2 attempts 1 s apart.
    return subprocess.run(args, capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=dict(os.environ, **(env or {})))


def _assert_one_line(result, *wanted):
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'Traceback' not in result.stderr + result.stdout
    last = result.stderr.strip().splitlines()[-1]
    assert ' cannot start: ' in last, result.stderr
    for text in wanted:
        assert text in last, result.stderr
    assert SECRET not in result.stderr + result.stdout


@pytest.fixture
def refused_port():
    """A port bound but not listening: connections to it are refused."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        yield sock.getsockname()[1]


def _retries(port):
    return {'connection': 'postgresql+psycopg2://ferrum:%s@127.0.0.1:%d/'
                          'ferrum' % (SECRET, port),
            'max_retries': '2', 'retry_interval': '1'}


@pytest.mark.parametrize('command', SCRIPTS)
def test_a_value_outside_the_choices_is_refused_at_start(tmp_path, command):
    result = _run(tmp_path, command,
                  {'lease': {'busy_node_policy': 'substitue'}})
    _assert_one_line(result, '[lease] busy_node_policy', "'substitue'",
                     'substitute, fail')


@pytest.mark.parametrize('command', SCRIPTS)
def test_a_bad_typed_value_is_refused_at_start(tmp_path, command):
    result = _run(tmp_path, command, {'conductor': {
        'heartbeat_interval': '10x'}})
    _assert_one_line(result, '[conductor] heartbeat_interval', "'10x'")


@pytest.mark.parametrize('command', SCRIPTS)
def test_an_unreachable_database_is_retried_then_named(tmp_path, command,
                                                       refused_port):
    result = _run(tmp_path, command, {'database': _retries(refused_port)})
    _assert_one_line(
        result, 'Cannot connect to the database postgresql+psycopg2://'
        'ferrum:***@127.0.0.1:%d/ferrum (tried 2 times' % refused_port,
        'Connection refused')
    # oslo.db's retries ran before the program gave up.
    assert 'SQL connection failed. 1 attempts left.' in (
        result.stdout + result.stderr)


@pytest.mark.parametrize('command', SCRIPTS)
def test_a_malformed_database_url_is_named(tmp_path, command):
    result = _run(tmp_path, command, {'database': {
        'connection': 'postgres//ferrum:%s@db/ferrum' % SECRET}})
    _assert_one_line(result, 'Cannot use the database postgres//ferrum:***@'
                     'db/ferrum', 'is not a URL', 'postgresql+psycopg2://')


@pytest.mark.parametrize('command', SCRIPTS)
def test_a_missing_database_driver_names_the_extra(tmp_path, command):
    # psycopg2 is installed here: a module of that name that cannot be
    # imported, first on the path, makes it missing for the child only.
    shadow = tmp_path / 'shadow' / 'psycopg2'
    shadow.mkdir(parents=True)
    (shadow / '__init__.py').write_text(
        "raise ModuleNotFoundError(\"No module named 'psycopg2'\", "
        "name='psycopg2')\n")
    path = os.pathsep.join(
        [str(tmp_path / 'shadow')]
        + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep)
           if p])
    result = _run(tmp_path, command, {'database': {
        'connection': 'postgresql+psycopg2://ferrum:%s@127.0.0.1/ferrum'
                      % SECRET}}, env={'PYTHONPATH': path})
    _assert_one_line(result, 'Cannot use the database postgresql+psycopg2://'
                     'ferrum:***@127.0.0.1/ferrum', 'Python module psycopg2, '
                     'is not installed; install ferrum[postgresql]')


def test_a_bare_postgresql_url_names_the_driver_it_needs(tmp_path):
    # SQLAlchemy 2.1 gives postgresql:// psycopg 3, which ferrum[postgresql]
    # does not install (it installs psycopg2).
    if importlib.util.find_spec('psycopg') is not None:
        pytest.skip('psycopg is installed here')
    result = _run(tmp_path, 'ferrum-dbsync', {'database': {
        'connection': 'postgresql://ferrum:%s@127.0.0.1/ferrum' % SECRET}})
    _assert_one_line(result, 'Python module psycopg, is not installed; write '
                     'postgresql+psycopg2:// and install ferrum[postgresql]')


def test_an_unknown_driver_module_is_named(tmp_path):
    # MySQLdb (mysqlclient) is not among ferrum's dependencies.
    result = _run(tmp_path, 'ferrum-dbsync', {'database': {
        'connection': 'mysql://ferrum:%s@127.0.0.1/ferrum' % SECRET}})
    _assert_one_line(result, 'Python module MySQLdb, is not installed')


def test_unknown_names_are_warned_about_and_ferrum_still_serves(tmp_path):
    extra = {'DEFAULT': {'enabled_hardware_type': 'ipmi'},
             'lease': {'busy_node_polcy': 'fail'},
             'leases': {'max_duration': '60'},
             # A library's section, registered only when loaded: silent.
             'keystone_authtoken': {'auth_url': 'http://keystone'}}
    with server.running_ferrum(tmp_path, extra) as url:
        assert requests.get(url + '/v1', timeout=10).status_code == 200
    output = (tmp_path / 'ferrum.out').read_text()
    assert output.count('Unknown option') == 2, output
    assert ('Unknown option [DEFAULT] enabled_hardware_type in %s is '
            'ignored; did you mean enabled_hardware_types?'
            % (tmp_path / 'ferrum.conf')) in output
    assert ('Unknown option [lease] busy_node_polcy in %s is ignored; did '
            'you mean busy_node_policy?' % (tmp_path / 'ferrum.conf')
            ) in output
    assert ('Unknown section [leases] in %s is ignored; did you mean '
            '[lease]?' % (tmp_path / 'ferrum.conf')) in output
    assert 'keystone_authtoken' not in output


def test_unknown_names_are_a_warning_for_dbsync(tmp_path):
    result = _run(tmp_path, 'ferrum-dbsync', {'api': {'prot': '6385'}})
    assert result.returncode == 0, result.stderr
    assert ('Unknown option [api] prot in %s is ignored; did you mean port?'
            % (tmp_path / 'ferrum.conf')) in result.stderr
    assert 'Database upgraded to' in result.stdout


@pytest.mark.parametrize('command', ['ferrum-placement',
                                     'ferrum-oneview-migrate'])
def test_the_tools_refuse_a_bad_value_with_their_failure_status(tmp_path,
                                                                command):
    # Their exit status 1 means something else (a backlog, a failed node).
    config = server.write_config(tmp_path, 0, {
        'lease': {'busy_node_policy': 'substitue'}})
    args = [os.path.join(BIN, command), '--config-file', str(config)]
    if command == 'ferrum-placement':
        args.append('status')
    result = subprocess.run(args, capture_output=True, text=True, timeout=120,
                            cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert 'Traceback' not in result.stderr
    assert result.stderr.strip() == (
        "%s cannot start: [lease] busy_node_policy in %s is not valid: Valid "
        "values are [substitute, fail], but found 'substitue'. Fix it in the "
        "config file." % (command, config))
