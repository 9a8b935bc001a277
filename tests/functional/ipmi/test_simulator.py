# SPDX-License-Identifier: Apache-2.0
"""The BMC simulator, checked with the real ipmitool: what the driver tests
rely on, and what an operator demoing with it will see.
"""

import re
import time

import pytest


def test_power_commands_and_state_dump(bmc):
    sim, port = bmc.sim, bmc.port
    assert sim.ipmitool(port, 'power', 'status').stdout.strip() == (
        'Chassis Power is off')
    reset = sim.ipmitool(port, 'power', 'reset')
    assert reset.returncode == 1
    assert 'not supported in present state' in reset.stderr
    for command, power in (('on', 'on'), ('cycle', 'on'), ('reset', 'on'),
                           ('soft', 'off')):
        assert sim.ipmitool(port, 'power', command).returncode == 0
        assert sim.state(port)['power'] == power
    assert sim.state(port)['log'] == ['power on', 'power cycle',
                                      'power reset', 'power soft']


def _boot_data(sim, port):
    output = sim.ipmitool(port, 'chassis', 'bootparam', 'get', '5').stdout
    return re.search(r'Boot parameter data: (\w+)', output).group(1)


@pytest.mark.parametrize('args, data, device', [
    (['pxe', 'options=persistent'], 'c004000000', 'pxe'),
    (['disk'], '8008000000', 'disk'),
    (['pxe', 'options=efiboot,persistent'], 'e004000000', 'pxe'),
    (['bios'], '8018000000', 'bios'),
])
def test_boot_flags_keep_persistent_and_efi_bits(bmc, args, data, device):
    assert bmc.sim.ipmitool(bmc.port, 'chassis', 'bootdev',
                            *args).returncode == 0
    assert _boot_data(bmc.sim, bmc.port) == data
    assert bmc.sim.state(bmc.port)['boot_device'] == device


def test_one_time_boot_device_is_consumed_by_power_on(bmc):
    bmc.sim.ipmitool(bmc.port, 'chassis', 'bootdev', 'pxe')
    bmc.sim.ipmitool(bmc.port, 'power', 'on')
    assert _boot_data(bmc.sim, bmc.port) == '0000000000'


@pytest.mark.parametrize('suite', ['3', '17'])
def test_power_and_boot_device_over_each_cipher_suite(bmc, suite):
    sim, port = bmc.sim, bmc.port
    for command, expected in (('on', 'Up/On'), ('status', 'is on'),
                              ('off', 'Down/Off'), ('status', 'is off')):
        result = sim.ipmitool(port, 'power', command, cipher=suite)
        assert (result.returncode, result.stderr) == (0, '')
        assert expected in result.stdout
    assert sim.ipmitool(port, 'chassis', 'bootdev', 'pxe',
                        'options=persistent', cipher=suite).returncode == 0
    output = sim.ipmitool(port, 'chassis', 'bootparam', 'get', '5',
                          cipher=suite).stdout
    assert 'Boot parameter data: c004000000' in output
    state = sim.state(port)
    assert state['log'] == ['power on', 'power off', 'bootdev pxe persistent']
    assert state['cipher_suites'] == [int(suite)]  # what RAKP really used


def test_automatic_choice_is_suite_17_of_the_two_listed(bmc):
    listed = bmc.sim.ipmitool(bmc.port, 'channel', 'getciphers', 'ipmi')
    assert [line.split()[:4] for line in listed.stdout.splitlines()[1:]] == [
        ['3', 'N/A', 'hmac_sha1', 'hmac_sha1_96'],
        ['17', 'N/A', 'hmac_sha256', 'sha256_128']]
    chosen = bmc.sim.ipmitool(bmc.port, '-v', 'power', 'status')
    assert chosen.returncode == 0
    assert 'Using best available cipher suite 17' in chosen.stderr
    assert bmc.sim.state(bmc.port)['cipher_suites'] == [17]


@pytest.mark.parametrize('suite', ['0', '1', '2', '8'])
def test_other_cipher_suites_are_refused_at_once(bmc, suite):
    started = time.monotonic()
    bad = bmc.sim.ipmitool(bmc.port, 'power', 'status', cipher=suite)
    assert bad.returncode == 1
    assert 'no matching cipher suite' in bad.stderr
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize('user, password, expected', [
    ('nobody', None, 'unauthorized name'),
    (None, 'wrong-password', 'RAKP 2 HMAC is invalid'),
])
def test_bad_credentials_fail_at_once(bmc, user, password, expected):
    started = time.monotonic()
    result = bmc.sim.ipmitool(bmc.port, '-v', 'power', 'status', user=user,
                              password=password)
    assert result.returncode == 1
    assert expected in result.stderr
    assert time.monotonic() - started < 1.0


def test_busy_hook_then_recovery(bmc):
    bmc.sim.busy(bmc.port, 1)
    busy = bmc.sim.ipmitool(bmc.port, 'power', 'status')
    assert 'Node busy' in busy.stderr
    assert bmc.sim.ipmitool(bmc.port, 'power', 'status').returncode == 0


def test_power_delay_lags_then_converges(bmc):
    bmc.sim.set_power_delay(bmc.port, 1)
    bmc.sim.ipmitool(bmc.port, 'power', 'on')
    assert 'off' in bmc.sim.ipmitool(bmc.port, 'power', 'status').stdout
    deadline = time.monotonic() + 10
    while 'on' not in bmc.sim.ipmitool(bmc.port, 'power', 'status').stdout:
        assert time.monotonic() < deadline


def test_mute_hook_looks_unreachable_then_answers(bmc_simulator):
    # The last BMC: muting blocks even the reset hook meanwhile.
    port = bmc_simulator.ports[-1]
    bmc_simulator.mute(port, 2)
    silent = bmc_simulator.ipmitool(port, '-v', 'power', 'status')
    assert silent.returncode == 1
    assert 'Get Auth Capabilities error' in silent.stderr
    bmc_simulator.wait_answering(port)
    bmc_simulator.reset(port)


def test_passwords_never_reach_state_files(bmc_simulator):
    text = ''.join(path.read_text()
                   for path in bmc_simulator.state_dir.glob('*.json'))
    assert '"power"' in text
    assert all(password not in text
               for _, password in bmc_simulator.credentials.values())
