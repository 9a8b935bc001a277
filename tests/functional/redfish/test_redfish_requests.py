# SPDX-License-Identifier: Apache-2.0
"""What reaches the BMC, seen by the recording proxy in front of the real
sushy-emulator: a power change sends its reset once, and none when the
System already is in the state asked for."""

from ferrum.common import states
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
