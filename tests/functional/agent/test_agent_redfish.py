# SPDX-License-Identifier: Apache-2.0
"""The ``direct`` deploy over Redfish virtual media, with the real agent:
sushy-tools' emulator is the BMC (it downloads the deploy ISO into its
virtual CD and boots from it), and the ``redfish-agent-test`` power
interface starts the agent when the BMC powers the machine on from the
CD."""

import hashlib
import os

from tests.functional.agent import nodes
from tests.functional.agent.ferrum_process import Ferrum
from tests.functional.redfish.emulator import Emulator


def _cd(emulator: Emulator, uuid: str) -> dict:
    found: dict = emulator.get(
        '/redfish/v1/Systems/%s/VirtualMedia/Cd' % uuid)
    return found


def test_redfish_virtual_media_boots_the_agent_that_writes_the_image(
        tmp_path, images):
    made, served = images
    with open(os.path.join(os.path.dirname(made.raw), 'ipa.iso'),
              'wb') as iso:
        iso.write(b'an agent ISO, as the BMC downloads it' * 100)
    emulator = Emulator(tmp_path / 'redfish')
    emulator.start()
    ferrum = Ferrum(tmp_path, nodes.ferrum_conf(
        DEFAULT={'enabled_hardware_types': 'redfish-agent-test',
                 'enabled_power_interfaces': 'redfish-agent-test',
                 'enabled_management_interfaces': 'redfish',
                 'enabled_boot_interfaces': 'redfish-virtual-media',
                 'enabled_deploy_interfaces': 'direct'},
        redfish={'power_poll_interval': '0.2', 'connect_timeout': '2',
                 'server_side_retries_delay': '0.1'},
        # The emulator shows a power change up to 11 s later.
        conductor={'power_state_change_timeout': '90',
                   'deploy_callback_timeout': '180'}))
    ferrum.start()
    system = emulator.uuids[0]
    try:
        with nodes.enrolled(ferrum, served, driver='redfish-agent-test',
                            driver_info=emulator.driver_info(
                                system, deploy_iso=served.url('ipa.iso'))
                            ) as (box, node):
            uuid = node['uuid']
            response = ferrum.api('PATCH', '/v1/nodes/%s' % uuid, json=[
                {'op': 'replace', 'path': '/automated_clean',
                 'value': False}])
            assert response.status_code == 200, response.text
            ferrum.provision(uuid, 'provide')
            ferrum.wait_state(uuid, 'available')
            response = ferrum.api('PATCH', '/v1/nodes/%s' % uuid, json=[
                {'op': 'add', 'path': '/instance_info/%s' % key,
                 'value': value}
                for key, value in nodes.image_info(made, served).items()])
            assert response.status_code == 200, response.text
            with served.hold('disk.raw'):
                ferrum.provision(uuid, 'active')
                ferrum.wait_step(uuid, 'write_image')
                # The BMC has the agent's ISO in its CD, and booted it.
                cd = _cd(emulator, system)
                assert cd['Inserted'] and cd['Image'] == served.url(
                    'ipa.iso')
                assert emulator.system(system)['PowerState'] == 'On'
                assert box.agent_running()
            active = ferrum.wait_state(uuid, 'active', 'deploy failed')
            assert active['provision_state'] == 'active', (
                active['last_error'])
            assert hashlib.sha256(box.read(0, made.size)).hexdigest() == (
                made.content_sha256)
            # The instance boots from the disk: no CD left in.
            assert not _cd(emulator, system)['Inserted']
            boot = emulator.system(system)['Boot']
            assert boot['BootSourceOverrideTarget'] == 'Hdd'
            assert '/ipa.iso' in served.requests
    finally:
        ferrum.stop()
        emulator.stop()
