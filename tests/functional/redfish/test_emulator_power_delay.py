# SPDX-License-Identifier: Apache-2.0
"""The emulator's power delay, as the tests set it (tools/redfish_emulator.py
``power_delay``): the time a reset applies, as the emulator itself reports
it with each accepted change, is the one asked for."""

import time

import requests

from tests.functional.redfish.emulator import POWER_DELAY
from tests.functional.redfish.emulator import Emulator
from tests.polling import wait_for


def _apply_time(emu, uuid, notifications):
    """Power the System on; (the apply time the emulator gave the change,
    the whole seconds before and after the request)."""
    before = int(time.time())
    response = requests.post(
        '%s/redfish/v1/Systems/%s/Actions/ComputerSystem.Reset'
        % (emu.url, uuid), json={'ResetType': 'On'}, timeout=30,
        auth=(emu.username, emu.password), verify=emu.verify)
    after = int(time.time())
    assert response.status_code == 204, response.text
    pending = wait_for(lambda: [doc['pending_power'] for doc in
                                notifications.documents(uuid)
                                if doc.get('pending_power')],
                       timeout=30, what='the emulator to report the reset')
    assert pending[0]['power_state'] == 'On'
    return pending[0]['apply_time'], before, after


def test_a_power_delay_out_of_the_fake_drivers_range(tmp_path,
                                                     notifications):
    """30 s: never drawn by the fake driver itself (1-11 s)."""
    emu = Emulator(tmp_path / 'bmc', systems=1, power_delay=(30, 30),
                   notify_url=notifications.url)
    emu.start()
    try:
        applies, before, after = _apply_time(emu, emu.uuids[0],
                                             notifications)
        assert before + 30 <= applies <= after + 30
        assert emu.system(emu.uuids[0])['PowerState'] == 'Off'
    finally:
        emu.stop()


def test_the_shared_emulator_shows_a_change_within_a_second(
        emulator, system, notifications):
    low, high = POWER_DELAY
    applies, before, after = _apply_time(emulator, system, notifications)
    assert before + low <= applies <= after + high <= after + 1
    wait_for(lambda: emulator.system(system)['PowerState'] == 'On',
             timeout=30, what='the System to be on')
