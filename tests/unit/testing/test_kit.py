# SPDX-License-Identifier: Apache-2.0
"""The driver test kit: ferrum's own interfaces pass its contract checks,
and the example third-party package's tests pass on the kit alone."""

import os
import pathlib
import subprocess
import sys

import pytest

from ferrum.drivers import noop
from ferrum.drivers.fake import interfaces as fake
from ferrum.drivers.ipmi import deploy as ipmi_deploy
from ferrum.drivers.ipmi import management as ipmi_management
from ferrum.drivers.ipmi import power as ipmi_power
from ferrum.drivers.redfish import firmware as redfish_firmware
from ferrum.drivers.redfish import inspect as redfish_inspect
from ferrum.drivers.redfish import management as redfish_management
from ferrum.drivers.redfish import power as redfish_power
from ferrum.drivers.redfish import vmedia as redfish_vmedia
from ferrum.testing import checks

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / 'thirdparty_driver'
IPMI_INFO = {'ipmi_address': '127.0.0.1', 'ipmi_username': 'admin',
             'ipmi_password': 'secret'}
REDFISH_INFO = {'redfish_address': '10.0.0.5', 'redfish_username': 'admin',
                'redfish_password': 'secret', 'redfish_verify_ca': 'false'}


@pytest.mark.parametrize('cls, driver_info', [
    (fake.FakePower, {}), (fake.FakeManagement, {}), (fake.FakeBoot, {}),
    (fake.FakeDeploy, {}), (fake.FakeInspect, {}), (fake.FakeVendor, {}),
    (fake.FakeFirmware, {}),
    (noop.NoManagement, {}), (noop.NoBoot, {}), (noop.NoInspect, {}),
    (noop.NoVendor, {}), (noop.NoopNetwork, {}), (noop.NoFirmware, {}),
    (ipmi_power.IpmitoolPower, IPMI_INFO),
    (ipmi_management.IpmitoolManagement, IPMI_INFO),
    (ipmi_deploy.RamdiskDeploy, IPMI_INFO),
    (redfish_power.RedfishPower, REDFISH_INFO),
    (redfish_management.RedfishManagement, REDFISH_INFO),
    (redfish_inspect.RedfishInspect, REDFISH_INFO),
    (redfish_firmware.RedfishFirmware, REDFISH_INFO),
])
def test_ferrums_interfaces_keep_the_contract(cls, driver_info):
    checks.check_interface(cls, driver_info=driver_info)


def test_redfish_virtual_media_keeps_the_contract():
    # Its validate reads instance_info too: the instance's ISO.
    checks.check_interface(
        redfish_vmedia.RedfishVirtualMediaBoot,
        driver_info=dict(REDFISH_INFO,
                         deploy_iso='http://images.example/deploy.iso'),
        instance_info={'boot_iso': 'https://images.example/boot.iso'})
    with pytest.raises(checks.ContractError, match='boot_iso'):
        checks.check_interface(
            redfish_vmedia.RedfishVirtualMediaBoot,
            driver_info=dict(REDFISH_INFO,
                             deploy_iso='http://images.example/deploy.iso'))


def test_check_interface_lists_every_problem():
    from ferrum.drivers import base
    from ferrum.periodic import decorators

    class Broken(fake.FakeVendor):
        secret_properties = frozenset({'token'})

        @decorators.periodic(spacing=lambda conf: -1)
        def tick(self, conductor, extra):
            pass

        @base.passthru(['FETCH'], require_exclusive_lock=False)
        def poke(self, task):
            pass

        def validate(self, task):
            _ = task.ctx.db  # reaching for the conductor in validate

    with pytest.raises(checks.ContractError) as info:
        checks.check_interface(Broken)
    text = str(info.value)
    for expected in ('token', 'spacing must be', '(self, conductor)',
                     'http_methods', 'exclusive lock', 'task.ctx'):
        assert expected in text, expected


def test_abstract_and_foreign_classes_are_refused():
    with pytest.raises(checks.ContractError, match='abstract'):
        checks.check_interface(type('Half', (fake.FakePower.__base__,), {}))
    with pytest.raises(checks.ContractError, match='not a subclass'):
        checks.check_interface(dict)


def test_example_package_passes_on_the_kit_alone():
    # The example's own test run: no conftest.py of ferrum's applies
    # (confcutdir), only the kit pytest loads from its entry point.
    env = dict(os.environ, PYTHONPATH=str(EXAMPLE))
    result = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
         '--confcutdir', str(EXAMPLE), '--rootdir', str(EXAMPLE),
         str(EXAMPLE / 'tests')],
        capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ' passed' in result.stdout and 'failed' not in result.stdout


def test_the_direct_deploy_keeps_the_contract():
    from ferrum.drivers.agent import deploy as agent_deploy
    checks.check_interface(
        agent_deploy.DirectDeploy,
        driver_info={'deploy_kernel': 'http://images.example/ipa.kernel',
                     'deploy_ramdisk': 'http://images.example/ipa.initramfs'},
        instance_info={'image_source': 'http://images.example/disk.raw',
                       'image_os_hash_algo': 'sha256',
                       'image_os_hash_value': 'a' * 64})
