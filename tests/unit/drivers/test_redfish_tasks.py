# SPDX-License-Identifier: Apache-2.0
"""What one read of a BMC task monitor comes to, and which node records
count (ferrum/drivers/redfish/tasks.py); the clock step's arguments."""

import datetime
import types

import pytest

from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import management
from ferrum.drivers.redfish import tasks

Report = client.TaskReport


@pytest.mark.parametrize('report,expected', [
    (None, tasks.DONE),  # the monitor is gone: assumed completed
    (Report(processing=True), tasks.WAITING),
    (Report(processing=True, state='Completed'), tasks.WAITING),
    (Report(processing=False, state='Running'), tasks.WAITING),
    (Report(processing=False, state='Pending'), tasks.WAITING),
    (Report(processing=False, state='Cancelling'), tasks.WAITING),
    (Report(processing=False), tasks.DONE),  # the operation's own 204
    (Report(processing=False, state='Completed', status='OK'), tasks.DONE),
    (Report(processing=False, state='Completed', status='Warning'),
     tasks.DONE),
    (Report(processing=False, state='Completed', status='Critical'),
     tasks.FAILED),
    (Report(processing=False, state='Exception', status='OK'), tasks.FAILED),
    (Report(processing=False, state='Killed'), tasks.FAILED),
    (Report(processing=False, state='Cancelled'), tasks.FAILED),
])
def test_outcome_of_one_read(report, expected):
    assert tasks.outcome(report) == expected


def _node(state, info):
    return types.SimpleNamespace(provision_state=state,
                                 driver_internal_info=info)


def test_a_record_counts_only_while_the_node_waits_in_its_state():
    waiting = {tasks.KEY: {'monitor': '/m/1', 'wait': states.CLEANWAIT}}
    assert tasks.record(_node(states.CLEANWAIT, waiting)) == waiting[
        tasks.KEY]
    # Left behind by an abort or the callback timeout.
    assert tasks.record(_node(states.CLEANFAIL, waiting)) is None
    assert tasks.record(_node(states.DEPLOYWAIT, waiting)) is None
    assert tasks.record(_node(states.CLEANWAIT, {})) is None
    assert tasks.record(_node(states.CLEANWAIT, {tasks.KEY: 'junk'})) is None


def test_clock_step_arguments():
    when = management._target_time(None, '2026-11-28T09:30:00+01:00')
    assert management._offset(None, when) == '+01:00'
    assert management._offset('-05:30', when) == '-05:30'
    naive = management._target_time(None, '2026-11-28T09:30:00.123')
    assert naive.isoformat() == '2026-11-28T09:30:00+00:00'
    for bad in ('+1', '01:00', '+01:00:00', '+25:00', 'UTC'):
        with pytest.raises(exception.InvalidParameterValue,
                           match='datetime_local_offset'):
            management._offset(bad, when)
    with pytest.raises(exception.InvalidParameterValue,
                       match='target_datetime "tomorrow"'):
        management._target_time(None, 'tomorrow')
    now = datetime.datetime(2026, 1, 2, 3, 4, 5, 678)
    task = types.SimpleNamespace(ctx=types.SimpleNamespace(clock=lambda: now))
    assert management._target_time(task, None).isoformat() == (
        '2026-01-02T03:04:05+00:00')
