# SPDX-License-Identifier: Apache-2.0
"""What reaches the BMC, seen by the recording proxy in front of the real
sushy-emulator: a power change sends its reset once, and none when the
System already is in the state asked for."""

import pytest

from ferrum.common import states
from ferrum.drivers.redfish import errors
from ferrum.objects import node as node_obj
from tests.polling import wait_for


def test_a_power_change_sends_one_reset_and_none_when_already_there(
        redfish_conductor, db, emulator, proxy, system):
    manager = redfish_conductor.manager
    node = manager.create_node({'driver': 'redfish',
                                'driver_info': emulator.driver_info(
                                    system, redfish_address=proxy.url)})
    reset = '/redfish/v1/Systems/%s/Actions/ComputerSystem.Reset' % system

    def changed():
        found = node_obj.Node.get(db, node.id)
        return found if found.target_power_state is None and (
            found.reservation is None) else None

    for _round in range(2):
        manager.change_node_power_state(node.uuid, states.POWER_ON)
        found = wait_for(changed, timeout=120, interval=0.05,
                         what='power on')
        assert (found.power_state, found.last_error) == (states.POWER_ON,
                                                         None)
    assert [seen.body for seen in proxy.requests_to('POST', reset)] == [
        {'ResetType': 'On'}]


def test_inject_nmi_sends_the_nmi_reset(redfish_conductor, emulator, proxy,
                                        system):
    """sushy's RESET_NMI reaches the BMC; the emulator's fake driver does
    not implement it and refuses (501): that refusal is the error, with
    the BMC's words. A BMC that accepts it (the proxy acknowledges for
    it) makes the call succeed."""
    manager = redfish_conductor.manager
    node = manager.create_node({'driver': 'redfish',
                                'driver_info': emulator.driver_info(
                                    system, redfish_address=proxy.url)})
    reset = '/redfish/v1/Systems/%s/Actions/ComputerSystem.Reset' % system
    with pytest.raises(errors.RedfishUnsupported) as caught:
        manager.inject_nmi(node.uuid)
    assert str(caught.value) == (
        'BMC %s does not support injecting an NMI: Power state Nmi is not '
        'supported' % proxy.url.rstrip('/'))
    assert caught.value.code == 400
    proxy.ignore('POST', reset)
    manager.inject_nmi(node.uuid)
    assert [seen.body for seen in proxy.requests_to('POST', reset)] == [
        {'ResetType': 'Nmi'}] * 2
