# SPDX-License-Identifier: Apache-2.0
"""Loading the redfish hardware type: all of it, or a start-up error that
names sushy when the library is missing, whichever part loads first."""

import subprocess
import sys
import textwrap

import pytest

from ferrum.drivers import loader

REDFISH = {'enabled_hardware_types': ['redfish'],
           'enabled_power_interfaces': ['redfish'],
           'enabled_management_interfaces': ['redfish'],
           'enabled_deploy_interfaces': ['ramdisk'],
           'enabled_boot_interfaces': ['noop'],
           'enabled_inspect_interfaces': ['noop'],
           'enabled_vendor_interfaces': ['noop']}


def test_redfish_loads_with_its_interfaces(conf):
    for name, value in REDFISH.items():
        conf.set_override(name, value)
    registry = loader.DriverRegistry(conf)
    assert registry.defaults['redfish'] == {
        'power': 'redfish', 'management': 'redfish', 'boot': 'noop',
        'deploy': 'ramdisk', 'inspect': 'noop', 'vendor': 'noop',
        'network': 'noop', 'firmware': 'no-firmware'}
    [props] = {tuple(sorted(row.properties)) for row in registry.advertised()
               if row.interface_name == 'redfish'}
    assert props == ('redfish_address', 'redfish_auth_type',
                     'redfish_password', 'redfish_system_id',
                     'redfish_username', 'redfish_verify_ca')


@pytest.mark.parametrize('module', [
    'ferrum.drivers.redfish', 'ferrum.drivers.redfish.power',
    'ferrum.drivers.redfish.management', 'ferrum.drivers.redfish.inspect'])
def test_without_sushy_every_part_names_it(module):
    # A fresh interpreter in which "import sushy" fails.
    script = textwrap.dedent('''
        import importlib, sys
        sys.modules['sushy'] = None
        try:
            importlib.import_module(%r)
            if %r == 'ferrum.drivers.redfish':
                from ferrum.drivers.redfish import RedfishHardware
                RedfishHardware()
        except ImportError as exc:
            print(exc)
        ''' % (module, module))
    result = subprocess.run([sys.executable, '-c', script],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    message = result.stdout.strip()
    assert 'needs the sushy library' in message, message
    assert 'pip install "ferrum[redfish]"' in message
