# SPDX-License-Identifier: Apache-2.0
"""``ferrum-oneview-migrate`` as a real process on the test's database,
against the OneView simulator: the dry run changes nothing, ``--apply``
records active nodes' profiles and removes available nodes' profiles.
"""

import configparser
import os
import subprocess
import sys

from tests.functional.oneview.driver import act
from tests.functional.oneview.driver import enroll
from tests.functional.oneview.driver import get
from tests.functional.oneview.driver import oneview_options
from tests.functional.oneview.driver import profiles
from tests.functional.oneview.driver import run_taken

BIN = os.path.dirname(sys.executable)
APPLIED = 'applied_server_profile_uri'


def _config(tmp_path, sim, **oneview):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_dict({'DEFAULT': {'state_path': str(tmp_path)},
                      'oneview': {k: str(v) for k, v in
                                  oneview_options(sim).items()}})
    parser['oneview']['page_size'] = '2'
    parser['oneview']['enable_periodic_tasks'] = 'false'
    for name, value in oneview.items():
        parser['oneview'][name] = str(value)
    path = tmp_path / 'migrate.conf'
    with open(path, 'w') as out:
        parser.write(out)
    return path


def _migrate(config, *args):
    return subprocess.run(
        [os.path.join(BIN, 'ferrum-oneview-migrate'), '--config-file',
         str(config), '--progress-every', '2', *args],
        capture_output=True, text=True, timeout=120)


def _pre_allocated(conductor, db, sim):
    """Nodes as pre-allocation left them: every hardware has a profile,
    and no node records one."""
    active = act(conductor, db, enroll(conductor, sim, 0), 'manage')
    active = act(conductor, db, active, 'provide')
    active = act(conductor, db, active, 'deploy')
    assert active.provision_state == 'active'
    active.driver_info = {k: v for k, v in active.driver_info.items()
                          if k != APPLIED}
    active.save()
    available = act(conductor, db, enroll(conductor, sim, 1), 'manage')
    available = act(conductor, db, available, 'provide')
    assert available.provision_state == 'available'
    manageable = act(conductor, db, enroll(conductor, sim, 2), 'manage')
    for index in (1, 2):
        sim.take(sim.hardware_uris()[index])
    return active, available, manageable


def test_dry_run_reports_and_apply_migrates(tmp_path, ov_conductor, db,
                                            oneview_simulator):
    sim = oneview_simulator
    active, available, manageable = _pre_allocated(ov_conductor, db, sim)
    on_active = sim.hardware(sim.hardware_uris()[0])['serverProfileUri']
    on_available = sim.hardware(sim.hardware_uris()[1])['serverProfileUri']
    config = _config(tmp_path, sim)

    dry = _migrate(config)
    assert dry.returncode == 0, dry.stderr
    assert 'would %s (active): record profile %s' % (
        active.uuid, on_active) in dry.stdout
    assert 'would %s (available): remove profile %s' % (
        available.uuid, on_available) in dry.stdout
    assert 'leave %s (manageable)' % manageable.uuid in dry.stdout
    assert ('3 oneview nodes: 1 to record, 1 to remove, 0 stale records, '
            '1 left alone, 0 failed. Dry run') in dry.stdout
    assert '... 2 of 3 nodes' in dry.stderr
    assert APPLIED not in get(db, active).driver_info
    assert len(profiles(sim)) == 3

    done = _migrate(config, '--apply')
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'done %s (active): record profile' % active.uuid in done.stdout
    assert 'Dry run' not in done.stdout
    assert get(db, active).driver_info[APPLIED] == on_active
    hardware = sim.hardware(sim.hardware_uris()[1])
    assert (hardware['serverProfileUri'], hardware['powerState']) == (
        None, 'Off')
    # The manageable node's profile is not ferrum's business.
    assert sim.hardware(sim.hardware_uris()[2])['serverProfileUri']
    assert get(db, available).reservation is None

    again = _migrate(config, '--apply')
    assert '0 to record, 0 to remove' in again.stdout
    # The migrated active node now tears down as dynamic allocation does.
    active = act(ov_conductor, db, get(db, active), 'deleted')
    assert (active.provision_state, active.last_error) == ('available', None)
    assert sim.hardware(sim.hardware_uris()[0])['serverProfileUri'] is None


def test_an_unreachable_appliance_is_reported(tmp_path, ov_conductor,
                                              oneview_simulator):
    sim = oneview_simulator
    sim.fault('appliance_down')
    result = _migrate(_config(tmp_path, sim))
    assert result.returncode == 2
    assert 'did not answer' in result.stderr


def test_it_refuses_to_run_while_the_periodic_tasks_are_on(
        tmp_path, ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    _active, available, _manageable = _pre_allocated(ov_conductor, db, sim)
    result = _migrate(_config(tmp_path, sim, enable_periodic_tasks='true'),
                      '--apply')
    assert result.returncode == 3
    assert result.stdout == ''
    assert result.stderr.startswith(
        'ferrum-oneview-migrate: refusing to run: [oneview] '
        'enable_periodic_tasks is true in this configuration.')
    assert 'enable_periodic_tasks = false in every conductor' in (
        result.stderr)
    # Nothing was touched.
    assert sim.hardware(sim.hardware_uris()[1])['serverProfileUri']
    assert get(db, available).provision_state == 'available'


def test_a_node_the_periodic_tasks_moved_is_left_with_the_procedure(
        tmp_path, ov_conductor, db, oneview_simulator):
    """The fight of issue 17, had the periodic tasks run first: the
    report says what happened and where the procedure is."""
    sim = oneview_simulator
    _active, available, _manageable = _pre_allocated(ov_conductor, db, sim)
    assert run_taken(ov_conductor) == 1
    result = _migrate(_config(tmp_path, sim))
    assert result.returncode == 0, result.stderr
    assert ('leave %s (manageable): moved to maintenance by the periodic '
            'tasks as in use by OneView' % available.uuid) in result.stdout
    assert 'doc/oneview.md, Migrating' in result.stdout


def test_a_refused_login_is_one_line_without_a_traceback(
        tmp_path, db, oneview_simulator):
    result = _migrate(_config(tmp_path, oneview_simulator,
                              password='not-the-password'))
    assert result.returncode == 2
    assert result.stderr.count('\n') == 1, result.stderr
    assert result.stderr.startswith('ferrum-oneview-migrate: Logging in to '
                                    'OneView appliance')
    assert 'Check [oneview] username and password' in result.stderr
    assert 'not-the-password' not in result.stderr + result.stdout


def test_old_nodes_enrolled_adopted_and_provided_then_migrated(
        tmp_path, ov_conductor, db, oneview_simulator):
    """doc/oneview.md's procedure for nodes of the old driver: enrol and
    manage them; adopt a running one, provide an idle one with automated
    cleaning off; the tool then records and removes; nothing of the
    hardware was touched before it."""
    sim = oneview_simulator
    uris = sim.hardware_uris()[:2]
    old = [sim.take(uri)['serverProfileUri'] for uri in uris]  # pre-allocation
    running = act(ov_conductor, db, enroll(ov_conductor, sim, 0), 'manage')
    running = act(ov_conductor, db, running, 'adopt')
    idle = act(ov_conductor, db, enroll(ov_conductor, sim, 1), 'manage')
    stored = get(db, idle)
    stored.automated_clean = False
    stored.save()
    idle = act(ov_conductor, db, idle, 'provide')
    assert (running.provision_state, idle.provision_state) == (
        'active', 'available'), (running.last_error, idle.last_error)
    assert [sim.hardware(uri)['serverProfileUri'] for uri in uris] == old

    done = _migrate(_config(tmp_path, sim), '--apply')
    assert done.returncode == 0, done.stdout + done.stderr
    assert get(db, running).driver_info[APPLIED] == old[0]
    assert sim.hardware(uris[1])['serverProfileUri'] is None
    stored = get(db, idle)
    stored.automated_clean = None
    stored.save()
    running = act(ov_conductor, db, get(db, running), 'deleted')
    assert (running.provision_state, running.last_error) == (
        'available', None)
    assert profiles(sim) == []
