# SPDX-License-Identifier: Apache-2.0
"""Loading the oneview hardware type: all of it, or a start-up error that
names hpOneView when the library is missing."""

import importlib.util
import subprocess
import sys
import textwrap

from ferrum.drivers import loader
from tests.real import require_real

ONEVIEW = {'enabled_hardware_types': ['oneview'],
           'enabled_power_interfaces': ['oneview'],
           'enabled_management_interfaces': ['oneview'],
           'enabled_deploy_interfaces': ['oneview'],
           'enabled_boot_interfaces': ['noop'],
           'enabled_inspect_interfaces': ['noop'],
           'enabled_vendor_interfaces': ['noop']}


def test_oneview_loads_with_its_interfaces(conf):
    if importlib.util.find_spec('hpOneView') is None:
        require_real('hpOneView')
    for name, value in ONEVIEW.items():
        conf.set_override(name, value)
    registry = loader.DriverRegistry(conf)
    assert registry.defaults['oneview'] == {
        'power': 'oneview', 'management': 'oneview', 'boot': 'noop',
        'deploy': 'oneview', 'inspect': 'noop', 'vendor': 'noop',
        'network': 'noop', 'firmware': 'no-firmware'}
    [props] = {tuple(sorted(row.properties)) for row in registry.advertised()
               if row.interface_name == 'oneview'}
    assert props == ('applied_server_profile_uri', 'server_hardware_uri')


def test_without_hponeview_start_up_fails_naming_it():
    # A fresh interpreter in which "import hpOneView" fails.
    script = textwrap.dedent('''
        import sys
        sys.modules['hpOneView'] = None
        from ferrum import conf as ferrum_conf
        from ferrum.common import exception
        from ferrum.drivers import loader
        conf = ferrum_conf.new_conf()
        for name, value in %r.items():
            conf.set_override(name, value)
        try:
            loader.DriverRegistry(conf)
        except exception.DriverLoadError as exc:
            print(exc)
        ''' % (ONEVIEW,))
    result = subprocess.run([sys.executable, '-c', script],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    message = result.stdout.strip()
    assert message.startswith('Cannot load hardware type "oneview" from '
                              'entry point namespace ferrum.hardware.types')
    assert 'needs the hpOneView 5.3.0 library' in message
    assert 'pip install "ferrum[oneview]"' in message
