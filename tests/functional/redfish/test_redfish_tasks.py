# SPDX-License-Identifier: Apache-2.0
"""BMC operations answered with a task monitor, through a real conductor,
real sushy and the real sushy-emulator behind a recording proxy.

The operation is the manual clean step ``management.set_bmc_clock``: the
emulator sets its Managers' clock, and the proxy (tests/functional/redfish/
proxy.py) turns its 204 into a 202 and a task monitor with a scripted end.
The periodic task is called directly and the conductor's clock is
injected: nothing sleeps.
"""

import logging

import pytest
import requests

from ferrum.common import states
from ferrum.drivers.redfish import tasks
from ferrum.objects import node as node_obj
from ferrum.testing.flows import settled
from tests.clocks import Clock
from tests.functional.redfish.bmc_tasks import TIME
from tests.functional.redfish.bmc_tasks import clean_clock
from tests.functional.redfish.bmc_tasks import clock_steps
from tests.functional.redfish.bmc_tasks import manager_path
from tests.functional.redfish.bmc_tasks import poll
from tests.functional.redfish.bmc_tasks import start_conductor
from tests.functional.redfish.bmc_tasks import waiting
from tests.functional.redfish.emulator import apply_conf
from tests.functional.redfish.proxy import MONITORS
from tests.functional.redfish.proxy import Script

TIMEOUT = 600


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def conductor(conf, db, clock):
    apply_conf(conf)
    apply_conf(conf, {'redfish': {'task_timeout': TIMEOUT,
                                  'task_poll_interval': 10}})
    svc = start_conductor(conf, db, clock=clock)
    yield svc
    svc.stop()


def emulated_clock(emulator, system):
    answer = requests.get(emulator.url + manager_path(system), timeout=30,
                          auth=(emulator.username, emulator.password))
    answer.raise_for_status()
    return answer.json()['DateTime'], answer.json()['DateTimeLocalOffset']


def node_of(db, node):
    return node_obj.Node.get(db, node.id)


def test_a_bmc_that_answers_at_once_sets_its_clock_without_waiting(
        conductor, db, emulator, proxy, system):
    node = clean_clock(conductor, db, emulator, proxy, system)
    node = settled(db, node.id, states.MANAGEABLE, timeout=60)
    assert node.last_error is None
    assert tasks.KEY not in node.driver_internal_info
    assert emulated_clock(emulator, system) == (TIME, '+01:00')
    assert [seen.body for seen in proxy.requests_to(
        'PATCH', manager_path(system))] == [
            {'DateTime': TIME, 'DateTimeLocalOffset': '+01:00'}]
    assert not proxy.tasks


def test_a_task_running_for_a_while_then_completed_resumes_cleaning(
        conductor, db, emulator, proxy, system):
    script = Script(running=2)
    node = clean_clock(conductor, db, emulator, proxy, system, script,
                       datetime_local_offset='+00:00')
    node = waiting(db, node)
    recorded = node.driver_internal_info[tasks.KEY]
    assert recorded['monitor'].startswith(MONITORS)
    assert recorded['operation'] == 'clean step management.set_bmc_clock'
    # The request reached the BMC; only its answer was "later".
    assert emulated_clock(emulator, system) == (TIME, '+00:00')

    poll(conductor)
    poll(conductor)
    assert script.reads == 2
    assert node_of(db, node).provision_state == states.CLEANWAIT
    poll(conductor)
    assert script.reads == 3
    node = settled(db, node.id, states.MANAGEABLE, timeout=60)
    assert (node.last_error, node.clean_step) == (None, None)
    assert tasks.KEY not in node.driver_internal_info


@pytest.mark.parametrize('script,says', [
    (Script(end='exception', messages=(
        'The clock cannot be set while NTP is enabled.',)),
     'failed on the BMC: task Exception (Critical): The clock cannot be set '
     'while NTP is enabled.'),
    (Script(status='Critical', messages=('Clock write failed.',)),
     'failed on the BMC: task Completed (Critical): Clock write failed.'),
    (Script(end='refused', messages=('DateTime is read-only.',)),
     'failed on the BMC: task Exception (Critical): HTTP 400: A general '
     'error has occurred.; DateTime is read-only.'),
], ids=['exception', 'critical', 'error-answer'])
def test_a_failed_task_fails_cleaning_with_the_bmcs_messages(
        conductor, db, emulator, proxy, system, script, says):
    node = waiting(db, clean_clock(conductor, db, emulator, proxy, system,
                                   script))
    poll(conductor)
    node = settled(db, node.id, states.CLEANFAIL, timeout=60)
    assert node.last_error.startswith(
        'Redfish task of clean step management.set_bmc_clock (task monitor '
        '%s1) ' % MONITORS)
    assert says in node.last_error
    assert node.maintenance and node.fault == states.FAULT_CLEAN_FAILURE
    assert tasks.KEY not in node.driver_internal_info


def test_a_monitor_that_disappears_is_assumed_completed(
        conductor, db, emulator, proxy, system, caplog):
    script = Script(running=1, end='gone')
    node = waiting(db, clean_clock(conductor, db, emulator, proxy, system,
                                   script))
    poll(conductor)
    assert node_of(db, node).provision_state == states.CLEANWAIT
    with caplog.at_level(logging.WARNING, logger=tasks.__name__):
        poll(conductor)
    node = settled(db, node.id, states.MANAGEABLE, timeout=60)
    assert node.last_error is None
    assert 'assuming it completed successfully' in caplog.text
    assert node.uuid in caplog.text


def test_a_task_that_never_ends_fails_at_the_timeout(
        conductor, db, clock, emulator, proxy, system):
    script = Script(end='never')
    node = waiting(db, clean_clock(conductor, db, emulator, proxy, system,
                                   script))
    clock.advance(TIMEOUT - 1)
    poll(conductor)
    assert node_of(db, node).provision_state == states.CLEANWAIT
    clock.advance(1)
    poll(conductor)
    node = settled(db, node.id, states.CLEANFAIL, timeout=60)
    assert script.reads == 2  # read once more before failing
    assert 'did not finish within %d seconds ([redfish] task_timeout)' % (
        TIMEOUT) in node.last_error
    assert 'clean step management.set_bmc_clock' in node.last_error


def test_retry_after_spaces_the_reads(conductor, db, clock, emulator, proxy,
                                      system):
    script = Script(running=2, retry_after=120)
    node = waiting(db, clean_clock(conductor, db, emulator, proxy, system,
                                   script))
    poll(conductor)
    assert script.reads == 1
    poll(conductor)  # the BMC asked for 120 s: not read again yet
    clock.advance(119)
    poll(conductor)
    assert script.reads == 1
    clock.advance(1)
    poll(conductor)
    assert script.reads == 2
    clock.advance(120)
    poll(conductor)
    assert script.reads == 3
    settled(db, node.id, states.MANAGEABLE, timeout=60)


def test_a_bmc_outage_while_polling_is_tried_again_not_failed(
        conductor, db, emulator, proxy, system):
    script = Script()
    node = waiting(db, clean_clock(conductor, db, emulator, proxy, system,
                                   script))
    proxy.outage = True
    poll(conductor)
    poll(conductor)
    node = node_of(db, node)
    assert (node.provision_state, node.last_error) == (states.CLEANWAIT,
                                                       None)
    assert script.reads == 0
    proxy.outage = False
    poll(conductor)
    node = settled(db, node.id, states.MANAGEABLE, timeout=60)
    assert node.last_error is None


def test_an_outage_past_the_timeout_fails_naming_both(
        conductor, db, clock, emulator, proxy, system):
    node = waiting(db, clean_clock(conductor, db, emulator, proxy, system,
                                   Script(end='never')))
    proxy.outage = True
    clock.advance(TIMEOUT)
    poll(conductor)
    node = settled(db, node.id, states.CLEANFAIL, timeout=60)
    assert '[redfish] task_timeout' in node.last_error
    assert ('the BMC did not answer the last read: The BMC is restarting'
            in node.last_error)
    assert 'tries again' not in node.last_error


def test_the_emulators_own_task_completes_the_wait(
        conductor, db, emulator, proxy, system):
    script = Script(location='/redfish/v1/TaskService/Tasks/42')
    node = waiting(db, clean_clock(conductor, db, emulator, proxy, system,
                                   script))
    assert node.driver_internal_info[tasks.KEY]['monitor'] == (
        script.location)
    poll(conductor)
    settled(db, node.id, states.MANAGEABLE, timeout=60)
    assert script.reads == 1


def test_a_new_conductor_goes_on_polling_the_recorded_monitor(
        conf, db, clock, emulator, proxy, system):
    apply_conf(conf)
    apply_conf(conf, {'redfish': {'task_timeout': TIMEOUT}})
    first = start_conductor(conf, db, clock=clock)
    script = Script(running=1)
    try:
        node = waiting(db, clean_clock(first, db, emulator, proxy, system,
                                       script))
        poll(first)
    finally:
        first.stop()
    monitor = node_of(db, node).driver_internal_info[tasks.KEY]['monitor']
    second = start_conductor(conf, db, clock=clock)
    try:
        assert node_of(db, node).provision_state == states.CLEANWAIT
        poll(second)
        node = settled(db, node.id, states.MANAGEABLE, timeout=60)
    finally:
        second.stop()
    assert script.reads == 2
    assert [seen.path for seen in proxy.seen if seen.method == 'GET'
            ].count(monitor) == 2


def test_a_bad_target_time_fails_the_step_and_names_it(
        conductor, db, emulator, proxy, system):
    node = clean_clock(conductor, db, emulator, proxy, system,
                       datetime_local_offset='1 hour')
    node = settled(db, node.id, states.CLEANFAIL, timeout=60)
    assert 'datetime_local_offset "1 hour"' in node.last_error
    assert not proxy.requests_to('PATCH', manager_path(system))


def test_a_bmc_that_keeps_its_old_clock_fails_the_step_naming_both(
        conductor, db, emulator, proxy, system):
    proxy.ignore('PATCH', manager_path(system))
    target = '2031-02-03T04:05:06+00:00'
    node = clean_clock(conductor, db, emulator, proxy, system,
                       target_datetime=target)
    node = settled(db, node.id, states.CLEANFAIL, timeout=60)
    shown, _offset = emulated_clock(emulator, system)
    assert shown != target
    assert 'it shows %s after being set to %s' % (shown, target) in (
        node.last_error)
    assert tasks.KEY not in node.driver_internal_info


def test_the_periodic_worker_polls_until_the_task_completes(
        conf, db, emulator, proxy, system):
    apply_conf(conf)
    apply_conf(conf, {'redfish': {'task_poll_interval': 0.05}})
    svc = start_conductor(conf, db)
    try:
        script = Script(running=3)
        node = waiting(db, clean_clock(svc, db, emulator, proxy, system,
                                       script))
        svc.start_periodics()
        node = settled(db, node.id, states.MANAGEABLE, timeout=60)
    finally:
        svc.stop()
    assert node.last_error is None
    assert script.reads == 4


def test_after_an_abort_the_old_monitor_is_left_alone(
        conductor, db, emulator, proxy, system):
    old = Script(end='never')
    node = waiting(db, clean_clock(conductor, db, emulator, proxy, system,
                                   old))
    conductor.manager.do_provisioning_action(node.uuid, 'abort')
    node = settled(db, node.id, states.CLEANFAIL, timeout=60)
    poll(conductor)
    assert old.reads == 0
    assert node_of(db, node).provision_state == states.CLEANFAIL
    # Cleaned again, the node waits for its new task only.
    conductor.manager.set_maintenance(node.uuid, False)
    conductor.manager.do_provisioning_action(node.uuid, 'manage')
    settled(db, node.id, states.MANAGEABLE, timeout=60)
    new = proxy.answer_with_task('PATCH', manager_path(system), Script())
    conductor.manager.do_provisioning_action(node.uuid, 'clean',
                                             clock_steps())
    waiting(db, node)
    poll(conductor)
    settled(db, node.id, states.MANAGEABLE, timeout=60)
    assert (old.reads, new.reads) == (0, 1)
