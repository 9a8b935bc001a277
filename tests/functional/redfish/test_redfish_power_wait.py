# SPDX-License-Identifier: Apache-2.0
"""How long the redfish power interface waits for a state, against a BMC
whose System never reaches it (fake_bmc.py) and a test clock: the
request's timeout, else Ironic's default for the change (600 s for a soft
one), and no read begun after the deadline."""

import pytest

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import task_manager
from ferrum.drivers.redfish import power
from ferrum.objects import node as node_obj
from tests.functional.redfish.emulator import apply_conf
from tests.polling import wait_for


class Clock:
    """Monotonic seconds that move only when slept or moved."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _change(conductor, bmc, target, timeout=None):
    """``set_power_state`` of an interface on the test clock; the failure
    and the seconds the clock moved."""
    clock = Clock()
    interface = power.RedfishPower(clock=clock, sleep=clock.sleep)
    node = conductor.manager.create_node({'driver': 'redfish',
                                          'driver_info': bmc.driver_info()})
    started = clock.now
    with task_manager.acquire(conductor.ctx, node.uuid,
                              purpose='test') as task:
        with pytest.raises(exception.PowerStateFailure) as caught:
            interface.set_power_state(task, target, timeout=timeout)
    return str(caught.value), clock.now - started


@pytest.mark.parametrize('target,before,reset,seconds', [
    (states.SOFT_POWER_OFF, 'On', 'GracefulShutdown', 600),
    (states.POWER_OFF, 'On', 'ForceOff', 90),
    # A soft reboot of an off node turns it on: a hard change.
    (states.SOFT_REBOOT, 'Off', 'On', 90)])
def test_without_a_timeout_a_soft_change_waits_soft_power_off_timeout(
        redfish_conductor, conf, fake_bmc, target, before, reset, seconds):
    """[conductor] power_state_change_timeout is 90 s here (REDFISH_CONF),
    soft_power_off_timeout its default, 600 s."""
    apply_conf(conf, {'redfish': {'power_poll_interval': 50}})
    fake_bmc.power_state = before
    error, waited = _change(redfish_conductor, fake_bmc, target)
    assert fake_bmc.resets == [reset]
    assert '%ds after %s' % (seconds, reset) in error
    assert waited == seconds


def test_a_soft_reboot_of_an_on_node_waits_soft_power_off_timeout(
        redfish_conductor, conf, fake_bmc):
    apply_conf(conf, {'redfish': {'power_poll_interval': 50}})
    fake_bmc.power_state = 'On'
    # The System goes off after the restart, and never comes back.

    def off_after_the_reset():
        if fake_bmc.resets:
            fake_bmc.power_state = 'Off'
    fake_bmc.on_read = off_after_the_reset
    error, waited = _change(redfish_conductor, fake_bmc, states.SOFT_REBOOT)
    assert fake_bmc.resets == ['GracefulRestart']
    assert '600s after GracefulRestart' in error
    assert waited == 600


def test_the_request_timeout_wins(redfish_conductor, conf, fake_bmc):
    apply_conf(conf, {'redfish': {'power_poll_interval': 1}})
    fake_bmc.power_state = 'On'
    error, waited = _change(redfish_conductor, fake_bmc,
                            states.SOFT_POWER_OFF, timeout=7)
    assert '7s after GracefulShutdown' in error
    assert waited == 7


def test_no_read_starts_after_the_deadline(redfish_conductor, conf,
                                           fake_bmc):
    """A slow BMC: each read takes 3 s of the clock. The wait sleeps no
    further than the deadline and then stops, without one more read."""
    apply_conf(conf, {'redfish': {'power_poll_interval': 2}})
    clock = Clock()
    starts = []

    def slow_read():
        starts.append(clock.now)
        clock.sleep(3)
    fake_bmc.on_read = slow_read
    interface = power.RedfishPower(clock=clock, sleep=clock.sleep)
    node = redfish_conductor.manager.create_node(
        {'driver': 'redfish', 'driver_info': fake_bmc.driver_info()})
    with task_manager.acquire(redfish_conductor.ctx, node.uuid,
                              purpose='test') as task:
        with pytest.raises(exception.PowerStateFailure):
            interface.set_power_state(task, states.POWER_ON, timeout=5)
    # The state read first (1000-1003); the deadline is 1008. The reset
    # reads the System (1003-1006), then the state is read (1006-1009):
    # past the deadline, so no sleep and no further read.
    assert fake_bmc.resets == ['On']
    assert starts == [1000, 1003, 1006]
    assert clock.now == 1009


def test_the_conductor_leaves_the_soft_default_to_the_driver(
        redfish_conductor, conf, db, fake_bmc):
    """Without a timeout in the request, a soft power off waits
    soft_power_off_timeout (here 2 s), not power_state_change_timeout
    (90 s here, longer than this test waits)."""
    apply_conf(conf, {'conductor': {'soft_power_off_timeout': 2}})
    fake_bmc.power_state = 'On'
    node = redfish_conductor.manager.create_node(
        {'driver': 'redfish', 'driver_info': fake_bmc.driver_info()})
    redfish_conductor.manager.change_node_power_state(node.uuid,
                                                      states.SOFT_POWER_OFF)

    def done():
        seen = node_obj.Node.get(db, node.id)
        return seen if seen.target_power_state is None else None
    node = wait_for(done, timeout=60, interval=0.05,
                    what='the soft power off to fail')
    assert '2s after GracefulShutdown' in node.last_error
    assert fake_bmc.resets == ['GracefulShutdown']
