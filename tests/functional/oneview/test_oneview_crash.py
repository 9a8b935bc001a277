# SPDX-License-Identifier: Apache-2.0
"""SIGKILL at each step of applying and of removing a server profile, for
deploy and for cleaning, against the OneView simulator (real hpOneView over
TLS). A conductor process starts the operation and is killed once the
simulator shows the step; a new conductor (the same host restarting, or
another one taking over a dead conductor's nodes) recovers, and the node
reaches ``available`` through the ordinary verbs, with no profile left on
the appliance and nothing done on the appliance by hand.

A step is held at the simulator: a request it keeps waiting
(``hang_request``) or a task it keeps running (``slow_task``). The step
between OneView finishing a removal and ferrum forgetting the record has no
request to hold; a removal task that finishes while ferrum is dead leaves
the same state, which the "removing" cases reach.
"""

import configparser
import subprocess
import sys

import pytest

from ferrum.conductor import service
from tests import process
from tests.functional.conductor import flows
from tests.functional.oneview.driver import ENABLED
from tests.functional.oneview.driver import act
from tests.functional.oneview.driver import apply_conf
from tests.functional.oneview.driver import enroll
from tests.functional.oneview.driver import get
from tests.functional.oneview.driver import oneview_options
from tests.functional.oneview.driver import profiles
from tests.functional.oneview.driver import quiet
from tests.functional.oneview.driver import tasks

APPLIED = 'applied_server_profile_uri'
APPLYING = 'oneview_applying'

#: The conductor process that starts the operation and is killed.
_CHILD = '''
import sys, threading
from ferrum import conf as ferrum_conf
from ferrum.conductor import service
conf = ferrum_conf.load_for_program(['--config-file', sys.argv[1]])
svc = service.ConductorService(conf)
svc.start(start_periodics=False)
svc.manager.do_provisioning_action(sys.argv[2], sys.argv[3])
threading.Event().wait()
'''

#: step -> (simulator fault, what the simulator shows once ferrum is there)
_HOLD_POST = ({'kind': 'hang_request', 'match': 'POST /rest/server-profiles',
               'seconds': 60}, 'hanging')
_SLOW_CREATE = ({'kind': 'slow_task', 'match': 'Create', 'seconds': 2},
                'Create')
_HOLD_FETCH = ({'kind': 'hang_request', 'seconds': 60,
                'match': 'GET /rest/server-profiles/'}, 'hanging')
_SLOW_OFF = ({'kind': 'slow_task', 'match': 'Set power state',
              'seconds': 2}, 'Set power state')
_HOLD_DELETE = ({'kind': 'hang_request', 'seconds': 60,
                 'match': 'DELETE /rest/server-profiles/'}, 'hanging')
_SLOW_DELETE = ({'kind': 'slow_task', 'match': 'Delete', 'seconds': 2},
                'Delete')

#: (flow, step, fault, recovered by): flow is (start state, verb,
#: automated cleaning); "other" recovery is a second conductor clearing the
#: dead one's locks.
_DEPLOY = ('available', 'deploy', True)
_UNDEPLOY = ('active', 'deleted', False)
_CLEAN = ('manageable', 'provide', True)
CASES = [
    pytest.param(_DEPLOY, *_HOLD_POST, 'same', id='deploy-apply-requested'),
    pytest.param(_DEPLOY, *_SLOW_CREATE, 'same', id='deploy-apply-running'),
    pytest.param(_DEPLOY, *_SLOW_CREATE, 'other',
                 id='deploy-apply-running-taken-over'),
    pytest.param(_DEPLOY, *_HOLD_FETCH, 'same', id='deploy-apply-finished'),
    pytest.param(_UNDEPLOY, *_SLOW_OFF, 'same', id='undeploy-power-off'),
    pytest.param(_UNDEPLOY, *_HOLD_DELETE, 'same',
                 id='undeploy-remove-requested'),
    pytest.param(_UNDEPLOY, *_SLOW_DELETE, 'other',
                 id='undeploy-remove-running-taken-over'),
    pytest.param(_CLEAN, *_HOLD_POST, 'same', id='clean-apply-requested'),
    pytest.param(_CLEAN, *_SLOW_CREATE, 'same', id='clean-apply-running'),
    pytest.param(_CLEAN, *_HOLD_FETCH, 'same', id='clean-apply-finished'),
    pytest.param(_CLEAN, *_HOLD_DELETE, 'same', id='clean-remove-requested'),
    pytest.param(_CLEAN, *_SLOW_DELETE, 'same', id='clean-remove-running'),
]


def _config_file(tmp_path, conf, sim, automated_clean):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_dict({
        'DEFAULT': dict({name: ','.join(value)
                         for name, value in ENABLED.items()},
                        host=conf.host, state_path=conf.state_path,
                        log_file=str(tmp_path / 'killed.log')),
        'conductor': {'automated_clean': str(automated_clean),
                      'heartbeat_interval': '1'},
        'oneview': {k: str(v) for k, v in oneview_options(sim).items()}})
    path = tmp_path / 'killed.conf'
    with open(path, 'w') as out:
        parser.write(out)
    return path


def _start(conf, db):
    conductor = service.ConductorService(conf, db=db)
    conductor.start(start_periodics=False)
    return conductor


def _prepare(conf, db, sim, start_state):
    """A node in ``start_state`` made by a conductor in this process."""
    conductor = _start(conf, db)
    try:
        node = act(conductor, db, enroll(conductor, sim), 'manage')
        if start_state in ('available', 'active'):
            node = act(conductor, db, node, 'provide')
        if start_state == 'active':
            node = act(conductor, db, node, 'deploy')
        assert (node.provision_state, node.last_error) == (start_state,
                                                           None)
    finally:
        conductor.stop()
    return node


def _at_step(sim, shows):
    state = sim.state()
    if shows == 'hanging':
        return state['hanging']
    return [t for t in state['tasks'] if t['name'] == shows
            and t['taskState'] == 'Running']


def _to_available(conductor, db, node):
    """The ordinary verbs an operator uses after each failure state."""
    node = quiet(db, node)
    if node.provision_state in ('deploy failed', 'error'):
        node = act(conductor, db, node, 'deleted')
    elif node.provision_state == 'clean failed':
        conductor.manager.set_maintenance(node.uuid, False)
        node = act(conductor, db, node, 'manage')
        node = act(conductor, db, node, 'provide')
    return node


@pytest.mark.parametrize('flow, fault, shows, recovered_by', CASES)
def test_sigkill_at_each_step_then_the_node_reaches_available(
        tmp_path, conf, db, oneview_simulator, flow, fault, shows,
        recovered_by):
    sim = oneview_simulator
    start_state, verb, automated_clean = flow
    apply_conf(conf, sim)
    conf.set_override('automated_clean', automated_clean, 'conductor')
    node = _prepare(conf, db, sim, start_state)
    hw_uri = node.driver_info['server_hardware_uri']

    sim.fault(**fault)
    child = subprocess.Popen(
        [sys.executable, '-c', _CHILD, str(_config_file(
            tmp_path, conf, sim, automated_clean)), node.uuid, verb],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    process.kill_when(child, lambda: _at_step(sim, shows), timeout=30,
                      what='the conductor to reach the step')
    killed_in = get(db, node).provision_state
    if shows == 'hanging':
        sim.clear_faults()  # the held request is dropped, never acted on
    if fault in (_HOLD_POST[0], _SLOW_CREATE[0], _HOLD_FETCH[0]):
        # The apply was announced before OneView heard of it.
        assert get(db, node).driver_internal_info.get(APPLYING), killed_in

    conductor = flows.after_kill(conf, db, recovered_by)
    try:
        crashed = quiet(db, node)
        assert crashed.provision_state in ('deploy failed', 'clean failed',
                                           'error'), crashed.provision_state
        assert recovered_by != 'other' or 'stopped sending heartbeats' in (
            crashed.last_error)
        sim.clear_faults()
        node = _to_available(conductor, db, crashed)
    finally:
        conductor.stop()
    assert (node.provision_state, node.maintenance, node.last_error) == (
        'available', False, None), node.last_error
    assert APPLIED not in node.driver_info
    assert APPLYING not in node.driver_internal_info
    assert profiles(sim) == []
    assert sim.hardware(hw_uri)['serverProfileUri'] is None
    # Nothing a OneView user's was ever touched: no profile was deleted
    # but ferrum's own.
    assert all('[%s]' % node.uuid in t['associatedResource']['resourceName']
               for t in tasks(sim, 'Delete'))
