# SPDX-License-Identifier: Apache-2.0
"""How ipmitool's output is classified, its command line, and BMC pacing.

The stderr samples are what ipmitool 1.8.19 printed with -v (ipmi-notes.md
section 5); the real-ipmitool tests are in tests/functional/ipmi.
"""

import pytest

from ferrum import conf as ferrum_conf
from ferrum.drivers.ipmi import driver_info
from ferrum.drivers.ipmi import runner


@pytest.mark.parametrize('stderr, cls', [
    ('> RAKP 2 HMAC is invalid\nError: Unable to establish IPMI v2 / RMCP+ '
     'session', runner.IpmiAuthError),
    ('RAKP 2 message indicates an error : unauthorized name\nError: Unable '
     'to establish IPMI v2 / RMCP+ session', runner.IpmiAuthError),
    ('Error in open session response message : no matching cipher suite\n'
     'Error: Unable to establish IPMI v2 / RMCP+ session',
     runner.IpmiCipherError),
    ('Authentication algorithm 0x01 is not what we requested 0x03',
     runner.IpmiCipherError),
    ('Get Auth Capabilities error\nError issuing Get Channel Authentication '
     'Capabilities request\nError: Unable to establish IPMI v2 / RMCP+ '
     'session', runner.IpmiUnreachable),
    ('Set Chassis Power Control to Up/On failed: Node busy',
     runner.IpmiBusy),
    ('Set Chassis Power Control to Reset failed: Command not supported in '
     'present state', runner.IpmiCommandError),
    ('Unable to send RAW command (channel=0x0 netfn=0xa lun=0x0 cmd=0x10 '
     'rsp=0xc1): Invalid command', runner.IpmiCommandError),
    ('', runner.IpmiCommandError),
])
def test_errors_are_classified_from_verbose_output(stderr, cls):
    found, reason = runner.classify(stderr)
    assert found is cls
    assert len(reason) <= 300


def test_operator_patterns_count_as_busy():
    found, reason = runner.classify('Vendor says: try again later',
                                    ['try again'])
    assert found is runner.IpmiBusy
    assert reason == 'Vendor says: try again later'


def test_command_line_holds_no_password():
    conf = ferrum_conf.new_conf()
    params = driver_info.parse({
        'ipmi_address': '10.1.1.1', 'ipmi_port': 6230,
        'ipmi_username': 'admin', 'ipmi_password': 'topsecret',
        'ipmi_cipher_suite': 17, 'ipmi_bridging': 'single',
        'ipmi_target_channel': 7, 'ipmi_target_address': '0x72'})
    argv = runner.IpmitoolRunner(conf).argv(params, '/tmp/pw', ['power',
                                                                'status'])
    assert 'topsecret' not in ' '.join(argv)
    assert argv[:1] == ['ipmitool']
    assert argv[-5:] == ['-v', '-f', '/tmp/pw', 'power', 'status']
    joined = ' '.join(argv)
    for flags in ('-I lanplus', '-H 10.1.1.1', '-p 6230', '-U admin',
                  '-C 17', '-L ADMINISTRATOR', '-b 0x07', '-t 0x72',
                  '-N 1', '-R 1'):
        assert flags in joined


def test_lan_protocol_and_anonymous_user():
    conf = ferrum_conf.new_conf()
    params = driver_info.parse({'ipmi_address': 'h',
                                'ipmi_protocol_version': '1.5'})
    argv = runner.IpmitoolRunner(conf).argv(params, 'f', ['mc', 'info'])
    assert argv[argv.index('-I') + 1] == 'lan'
    assert '-U' not in argv


class FakeClock:
    def __init__(self):
        self.now = 100.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_pacing_spaces_commands_per_bmc_only():
    clock = FakeClock()
    pacing = runner.BmcPacing(clock=clock, sleep=clock.sleep)
    with pacing.turn(('10.0.0.1', 623), 2.0):
        clock.now += 0.5
    with pacing.turn(('10.0.0.2', 623), 2.0):
        pass
    assert clock.slept == []
    with pacing.turn(('10.0.0.1', 623), 2.0):
        pass
    assert clock.slept == [2.0]
    with pacing.turn(('10.0.0.1', 624), 2.0):
        pass
    assert clock.slept == [2.0]


def test_version_gate_rejects_missing_or_old_ipmitool():
    class Result:
        def __init__(self, stdout):
            self.stdout = stdout

    def old(*args, **kwargs):
        return Result('ipmitool version 1.8.11\n')

    def missing(*args, **kwargs):
        raise FileNotFoundError('ipmitool')

    def current(*args, **kwargs):
        return Result('ipmitool version 1.8.19\n')

    with pytest.raises(Exception, match='too old'):
        runner.check_version(old)
    with pytest.raises(Exception, match='install ipmitool'):
        runner.check_version(missing)
    assert runner.check_version(current) == '1.8.19'
