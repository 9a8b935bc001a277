# SPDX-License-Identifier: Apache-2.0
"""The oneview driver under test: its modules, its config, enrolment,
provisioning to a quiet state, periodic runs, the simulator's records.

A conductor (``ov_conductor`` in conftest.py) runs in the test's process
on the test's database; the real hpOneView client talks to the OneView
simulator of ``conftest.py``. Periodic tasks are called directly with the
conductor's context.
"""

import importlib
import importlib.util
import os

import pytest

from ferrum.objects import node as node_obj
from tests.polling import wait_for

if importlib.util.find_spec('hpOneView') is None:
    # At import, so the test modules using these helpers are skipped (or,
    # under FERRUM_REQUIRE_REAL=1, fail) instead of failing to import.
    if os.environ.get('FERRUM_REQUIRE_REAL') == '1':
        pytest.fail('hpOneView is required (FERRUM_REQUIRE_REAL=1) but '
                    'missing', pytrace=False)
    pytest.skip('hpOneView is not available', allow_module_level=True)

# The driver's modules import hpOneView: tests take them from here.
allocation = importlib.import_module('ferrum.drivers.oneview.allocation')
deploy = importlib.import_module('ferrum.drivers.oneview.deploy')
periodics = importlib.import_module('ferrum.drivers.oneview.periodics')

ENABLED = {'enabled_hardware_types': ['fake-hardware', 'oneview'],
           'enabled_power_interfaces': ['fake', 'oneview'],
           'enabled_management_interfaces': ['fake', 'oneview'],
           'enabled_deploy_interfaces': ['fake', 'oneview']}


def oneview_options(sim):
    """The [oneview] options pointing at the simulator."""
    return {'manager_url': sim.address, 'username': sim.username,
            'password': sim.password, 'tls_cacert_file': sim.ca_file,
            'request_timeout': 10}


def apply_conf(conf, sim):
    for name, value in ENABLED.items():
        conf.set_override(name, value)
    for name, value in oneview_options(sim).items():
        conf.set_override(name, value, 'oneview')


def capabilities(template_uri):
    return 'server_profile_template_uri:%s' % template_uri


def enroll(conductor, sim, index=0, template=None, **values):
    hw_uri = sim.hardware_uris()[index]
    return conductor.manager.create_node(dict({
        'driver': 'oneview',
        'driver_info': {'server_hardware_uri': hw_uri},
        'properties': {'capabilities': capabilities(
            template or sim.template_uri)}}, **values))


def get(db, node):
    return node_obj.Node.get(db, node.id)


def quiet(db, node, timeout=30.0):
    """The node once no operation holds it and it is in a stable or
    failure state (never a transient one)."""
    transient = ('cleaning', 'clean wait', 'deploying', 'wait call-back',
                 'deleting', 'verifying')

    def check():
        current = get(db, node)
        return current if (current.reservation is None and
                           current.provision_state not in transient) else None
    return wait_for(check, timeout, interval=0.01,
                    what='node %s to settle' % node.uuid)


def act(conductor, db, node, action):
    conductor.manager.do_provisioning_action(node.uuid, action)
    return quiet(db, node)


def run_taken(conductor):
    return periodics.check_nodes_taken_by_oneview(conductor.ctx)


def run_freed(conductor):
    return periodics.check_nodes_freed_by_oneview(conductor.ctx)


def run_cleanfail(conductor):
    return periodics.check_nodes_taken_on_cleanfail(conductor.ctx)


def profiles(sim):
    return sim.state()['profiles']


def tasks(sim, name=None):
    return [t for t in sim.state()['tasks']
            if name is None or t.get('name') == name]
