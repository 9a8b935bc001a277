# SPDX-License-Identifier: Apache-2.0
"""SIGKILL of the conductor that started a BMC task (real sushy, the real
sushy-emulator behind the recording proxy).

A conductor process cleans a node with ``management.set_bmc_clock``, which
the proxy answers with a task monitor, and is killed:

* once the node waits in ``clean wait``: the monitor is in the database, so
  a new conductor (the same host restarting, or another one once the dead
  one's heartbeat is old) goes on polling it, and cleaning ends;
* while the BMC's 202 is on its way (the emulator has set the clock): the
  node was locked in ``cleaning``, so the restarted conductor fails it
  ("retry the operation"), and the ordinary verbs bring it back.
"""

import configparser
import json
import subprocess
import sys
import threading

import pytest

from ferrum.common import states
from ferrum.drivers.redfish import tasks
from ferrum.objects import node as node_obj
from ferrum.testing.flows import settled
from tests import process
from tests.functional.conductor import flows
from tests.functional.redfish.bmc_tasks import clock_steps
from tests.functional.redfish.bmc_tasks import enroll_manageable
from tests.functional.redfish.bmc_tasks import manager_path
from tests.functional.redfish.bmc_tasks import poll
from tests.functional.redfish.bmc_tasks import start_conductor
from tests.functional.redfish.emulator import REDFISH_CONF
from tests.functional.redfish.emulator import apply_conf
from tests.functional.redfish.proxy import Script

#: The conductor process that starts cleaning and is killed.
_CHILD = '''
import json, sys, threading
from ferrum import conf as ferrum_conf
from ferrum.conductor import service
conf = ferrum_conf.load_for_program(['--config-file', sys.argv[1]])
svc = service.ConductorService(conf)
svc.start(start_periodics=False)
svc.manager.do_provisioning_action(sys.argv[2], 'clean',
                                   json.loads(sys.argv[3]))
threading.Event().wait()
'''


def _config_file(tmp_path, conf):
    options = {group: {name: ','.join(value) if isinstance(value, list)
                       else str(value) for name, value in values.items()}
               for group, values in REDFISH_CONF.items()}
    options['DEFAULT'].update(host=conf.host, state_path=conf.state_path,
                              log_file=str(tmp_path / 'killed.log'))
    options['conductor']['heartbeat_interval'] = '1'
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_dict(options)
    path = tmp_path / 'killed.conf'
    with open(path, 'w') as out:
        parser.write(out)
    return path


def _kill_when(tmp_path, conf, node, reached):
    """Clean ``node`` in a conductor process; SIGKILL it once ``reached``
    is true."""
    child = subprocess.Popen(
        [sys.executable, '-c', _CHILD, str(_config_file(tmp_path, conf)),
         node.uuid, json.dumps(clock_steps())],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    process.kill_when(child, reached,
                      what='the conductor to reach the step')


def _manageable(conf, db, emulator, proxy, system):
    """A manageable node, made by a conductor in this process."""
    apply_conf(conf)
    first = start_conductor(conf, db)
    try:
        return enroll_manageable(first, db, emulator, proxy, system)
    finally:
        first.stop()


@pytest.mark.parametrize('recovered_by', ['same', 'other'])
def test_killed_while_waiting_a_new_conductor_polls_and_finishes(
        tmp_path, conf, db, emulator, proxy, system, recovered_by):
    node = _manageable(conf, db, emulator, proxy, system)
    script = proxy.answer_with_task('PATCH', manager_path(system),
                                    Script(running=1))

    def recorded():
        found = node_obj.Node.get(db, node.id)
        return (found.provision_state == states.CLEANWAIT
                and tasks.KEY in found.driver_internal_info)
    _kill_when(tmp_path, conf, node, recorded)

    conductor = flows.after_kill(conf, db, recovered_by)
    try:
        assert node_obj.Node.get(db, node.id).provision_state == (
            states.CLEANWAIT)
        poll(conductor)
        assert node_obj.Node.get(db, node.id).provision_state == (
            states.CLEANWAIT)
        poll(conductor)
        done = settled(db, node.id, states.MANAGEABLE, timeout=60)
    finally:
        conductor.stop()
    assert (done.last_error, done.maintenance) == (None, False)
    assert tasks.KEY not in done.driver_internal_info
    assert script.reads == 2


def test_killed_before_the_202_arrived_the_node_fails_and_recovers(
        tmp_path, conf, db, emulator, proxy, system):
    node = _manageable(conf, db, emulator, proxy, system)
    held = threading.Event()
    proxy.answer_with_task('PATCH', manager_path(system), Script(hold=held))
    try:
        _kill_when(tmp_path, conf, node, lambda: proxy.requests_to(
            'PATCH', manager_path(system)))
    finally:
        held.set()
    conductor = start_conductor(conf, db)
    try:
        failed = node_obj.Node.get(db, node.id)
        assert failed.provision_state == states.CLEANFAIL
        assert 'retry the operation' in failed.last_error
        assert tasks.KEY not in failed.driver_internal_info
        # The operator's ordinary verbs: out of maintenance, manage, clean.
        conductor.manager.set_maintenance(node.uuid, False)
        conductor.manager.do_provisioning_action(node.uuid, 'manage')
        settled(db, node.id, states.MANAGEABLE, timeout=60)
        conductor.manager.do_provisioning_action(node.uuid, 'clean',
                                                 clock_steps())
        done = settled(db, node.id, states.MANAGEABLE, timeout=60)
    finally:
        conductor.stop()
    assert (done.last_error, done.maintenance) == (None, False)
