# SPDX-License-Identifier: Apache-2.0
"""Waiting for OneView to finish with ferrum's profile, with an injected
clock: the appliance is replaced by the states it reports in turn."""

import importlib.util
import types

import pytest

from ferrum.drivers.oneview import errors
from tests.real import require_real


@pytest.fixture
def allocation():
    if importlib.util.find_spec('hpOneView') is None:
        require_real('hpOneView')
    from ferrum.drivers.oneview import allocation as module
    return module


class _Appliance:
    """Answers each read of the hardware with the next state."""

    def __init__(self, states, task_timeout):
        self.states = list(states)
        self.settings = types.SimpleNamespace(task_timeout=task_timeout)
        self.reads = 0

    def get_server_hardware(self, uri):
        self.reads += 1
        return {'uri': uri, 'state': self.states.pop(0)}


def _task():
    return types.SimpleNamespace(node=types.SimpleNamespace(uuid='n-1'))


def test_it_reads_again_until_the_profile_settles(allocation):
    now, slept = [0.0], []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds
    ov = _Appliance(['ApplyingProfile', 'ProfileApplied'], task_timeout=60)
    hardware = allocation._settled(
        _task(), ov, '/rest/server-hardware/1', {'state': 'ApplyingProfile'},
        sleep=sleep, clock=lambda: now[0])
    assert hardware['state'] == 'ProfileApplied'
    assert ov.reads == 2 and len(slept) == 2


def test_it_gives_up_after_task_timeout_naming_it(allocation):
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds
    ov = _Appliance(['RemovingProfile'] * 100, task_timeout=2)
    with pytest.raises(errors.OneViewTaskError) as caught:
        allocation._settled(_task(), ov, '/rest/server-hardware/1',
                            {'state': 'RemovingProfile'}, sleep=sleep,
                            clock=lambda: now[0])
    assert 'still RemovingProfile after 2s ([oneview] task_timeout)' in str(
        caught.value)
    assert caught.value.code == 409
    assert ov.reads <= 2 / allocation._SETTLE_POLL_S + 1
