# SPDX-License-Identifier: Apache-2.0
"""``baremetal lease ...`` (the ferrum-client plugin) through the real
``baremetal`` command, and its Python client, against a running ferrum."""

import datetime
import os

import pytest

from tests.functional.clients import session
from tests.functional.clients.session import BAREMETAL
from tests.functional.clients.session import Baremetal
from tests.real import require_real


@pytest.fixture
def cli(ferrum_sqlite_url, tmp_path):
    """The CLI on the SQLite ferrum: each command is a process start, and
    the API below it is tested on both backends in tests/functional/leases.
    """
    if not os.access(BAREMETAL, os.X_OK):
        require_real('the baremetal CLI (python-ironicclient)')
    try:
        import ferrum_client  # noqa: F401
    except ImportError:
        require_real('ferrum-client (pip install -e client/)')
    return Baremetal(ferrum_sqlite_url, str(tmp_path))


def _at(hours):
    when = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(
        hours=hours)
    return when.replace(microsecond=0).isoformat()


def test_lease_commands(cli):
    rc = session.unique('cli-lease')
    nodes = [cli.json('node', 'create', '--driver', 'fake-hardware',
                      '--resource-class', rc)['uuid'] for _ in range(3)]
    name = session.unique('lease')
    lease = cli.json('lease', 'create', '--project', 'demo',
                     '--resource-class', rc, '--count', '2',
                     '--start-time', _at(24), '--end-time', _at(26),
                     '--name', name, '--extra', 'purpose=ci')
    assert lease['status'] == 'pending'
    assert len(lease['nodes']) == 2 and set(lease['nodes']) <= set(nodes)
    assert lease['extra'] == {'purpose': 'ci'}

    refused = cli.fails('lease', 'create', '--project', 'other',
                        '--resource-class', rc, '--count', '2',
                        '--start-time', _at(25), '--end-time', _at(27))
    assert 'Not enough nodes for this lease: 2 wanted, 1 found' in refused
    assert 'booked by other leases' in refused
    bad = cli.fails('lease', 'create', '--project', 'other',
                    '--resource-class', rc, '--end-time', _at(-1))
    assert 'must end after it starts' in bad
    # No token, so no project of the caller's to default to.
    unnamed = cli.fails('lease', 'create', '--resource-class', rc,
                        '--end-time', _at(30))
    assert 'Give --project' in unnamed

    listed = cli.json('lease', 'list', '--project', 'demo',
                      '--status', 'pending')
    assert name in [entry['name'] for entry in listed]
    # One instant: computed twice, a minute can turn in between.
    end = _at(27)
    # The refusal names the options as the CLI spells them (the parser
    # would take --end for an abbreviation of --os-endpoint).
    assert ('give --name, --end-time or --extra'
            in cli.fails('lease', 'set', name))
    cli('lease', 'set', name, '--end-time', end, '--extra', 'owner=ops')
    shown = cli.json('lease', 'show', name)
    assert shown['end'] == end
    assert shown['extra'] == {'purpose': 'ci', 'owner': 'ops'}

    assert 'Deleted lease %s' % name in cli('lease', 'delete', name)
    assert cli.json('lease', 'show', lease['uuid'])['status'] == 'cancelled'
    assert 'could not be found' in cli.fails('lease', 'show', 'no-such')


def test_commands_find_nodes_by_name(cli):
    """Every plugin command that takes a node takes its name: the plugin
    sends the CLI's API version (names are idents from 1.5, as in Ironic;
    a request without a version is at 1.1)."""
    rc = session.unique('cli-named')
    names = [session.unique('named') for _ in range(2)]
    uuids = [cli.json('node', 'create', '--driver', 'fake-hardware',
                      '--resource-class', rc, '--name', name)['uuid']
             for name in names]
    lease = cli.json('lease', 'create', '--project', 'demo',
                     '--candidate-node', names[0], '--start-time', _at(30),
                     '--end-time', _at(31))
    assert lease['nodes'] == [uuids[0]]
    listed = cli.json('lease', 'list', '--node', names[0])
    assert [entry['uuid'] for entry in listed] == [lease['uuid']]
    assert cli.json('lease', 'list', '--node', names[1]) == []
    # The version the operator asks for is the one sent.
    for version in ('1.5', '1.31'):
        listed = cli.json('--os-baremetal-api-version', version,
                          'lease', 'list', '--node', names[0])
        assert [entry['uuid'] for entry in listed] == [lease['uuid']]
    refused = cli.fails('--os-baremetal-api-version', '1.1',
                        'lease', 'list', '--node', names[0])
    assert 'A node name needs API version 1.5 or later' in refused
    listed = cli.json('--os-baremetal-api-version', '1.1',
                      'lease', 'list', '--node', uuids[0])
    assert [entry['uuid'] for entry in listed] == [lease['uuid']]


def test_python_client_calendar(cli):
    from ferrum_client import client
    leases = client.LeaseClient.for_endpoint(cli.url)
    rc = session.unique('py-lease')
    node = cli.json('node', 'create', '--driver', 'fake-hardware',
                    '--resource-class', rc)['uuid']
    made = leases.create(project='demo', resource_class=rc, start=_at(2),
                         end=_at(3))
    calendar = leases.calendar(node, start=_at(1), end=_at(4))
    assert [entry['uuid'] for entry in calendar['leases']] == [made['uuid']]
    assert len(calendar['free']) == 2
    # By name too: the client sends the version that has node names.
    name = session.unique('py-named')
    named = cli.json('node', 'create', '--driver', 'fake-hardware',
                     '--resource-class', session.unique('py-named'),
                     '--name', name)['uuid']
    booked = leases.create(project='demo', candidate_nodes=[name],
                           start=_at(2), end=_at(3))
    by_name = leases.calendar(name, start=_at(1), end=_at(4))
    assert by_name['node_uuid'] == named
    assert [entry['uuid'] for entry in by_name['leases']] == [booked['uuid']]
    assert [entry['uuid'] for entry in leases.list(node=name)] == [
        booked['uuid']]
    with pytest.raises(client.LeaseError) as caught:
        leases.create(project='demo', resource_class=rc, count=0, end=_at(3))
    assert caught.value.status == 400
    assert 'count must be 1' in str(caught.value)
    leases.delete(made['uuid'])
    assert leases.get(made['uuid'])['status'] == 'cancelled'


def test_client_needs_nothing_of_the_server():
    """ferrum-client installs without ferrum's dependencies: it imports
    with ferrum, Flask, SQLAlchemy and oslo.db blocked."""
    import configparser
    import subprocess
    import sys
    setup = configparser.ConfigParser()
    setup.read(os.path.join(os.path.dirname(__file__), '..', '..', '..',
                            'client', 'setup.cfg'))
    requires = setup['options']['install_requires'].split()
    assert not [r for r in requires if r.lower().startswith(
        ('ferrum', 'flask', 'sqlalchemy', 'oslo.db', 'alembic'))], requires
    blocked = ('ferrum', 'flask', 'sqlalchemy', 'oslo_db', 'alembic')
    result = subprocess.run([sys.executable, '-c', (
        'import sys\nfor name in %r: sys.modules[name] = None\n'
        'import ferrum_client.cli, ferrum_client.client' % (blocked,))],
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
