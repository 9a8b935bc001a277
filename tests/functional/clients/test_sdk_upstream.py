# SPDX-License-Identifier: Apache-2.0
"""openstacksdk's own bare-metal functional tests, from the installed
package, unchanged, against a running ferrum (SQLite and PostgreSQL).

Each module of ``openstack.tests.functional.baremetal.v1`` that ferrum
serves runs in a pytest process of its own, with a ``clouds.yaml`` naming
the four clouds the suite asks for (``devstack``, ``devstack-alt``,
``devstack-admin``, ``devstack-system-admin``), all of them this ferrum
without authentication. ``has_compute``/``has_image`` are off: the suite
looks for a flavor and an image only where those services exist.

A test may be skipped only because it needs a microversion above the
one ferrum serves (the suite's own ``require_service``), and may be left
out only when :data:`NOT_RUN` names it with the reason: anything else
fails here, so a new skip or failure cannot hide.
"""

import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from ferrum.api import microversion

PACKAGE = 'openstack.tests.functional.baremetal.v1'

#: The upstream modules ferrum serves. Add a module when its resource is.
MODULES = ('test_node', 'test_port', 'test_port_group', 'test_driver',
           'test_conductor', 'test_allocation', 'test_chassis',
           'test_volume_connector', 'test_volume_target',
           'test_deploy_templates')

#: Upstream tests not run, each with the reason (``module::Class::test``).
NOT_RUN = {
    'test_allocation::TestBareMetalAllocation::'
    'test_allocation_create_get_delete':
        'asserts that a POST returns the allocation "allocating"; by '
        'default ferrum tries the first candidates before it answers, so '
        'it returns "active" ([conductor] allocation_wait_timeout = 0 '
        'gives Ironic\'s answer)',
}

_SKIP = re.compile(r'does not provide microversion 1\.(\d+)$')


@pytest.fixture(scope='module')
def clouds_yaml(ferrum_url: str, tmp_path_factory: pytest.TempPathFactory
                ) -> pathlib.Path:
    path = tmp_path_factory.mktemp('sdk-upstream') / 'clouds.yaml'
    cloud = ('    auth_type: none\n'
             '    auth:\n      endpoint: %(url)s/\n'
             '    baremetal_endpoint_override: %(url)s/\n'
             '    has_compute: false\n    has_image: false\n'
             % {'url': ferrum_url})
    path.write_text('clouds:\n' + ''.join(
        '  %s:\n%s' % (name, cloud) for name in (
            'devstack', 'devstack-alt', 'devstack-admin',
            'devstack-system-admin')))
    return path


def _run(module: str, clouds: pathlib.Path) -> ElementTree.Element:
    report = clouds.parent / ('%s.xml' % module)
    # -k, not --deselect: under --pyargs the ids have no stable path.
    left_out = ['not (%s and %s)' % tuple(key.split('::')[1:])
                for key in NOT_RUN if key.startswith(module + '::')]
    deselect = ['-k', ' and '.join(left_out)] if left_out else []
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(('OS_', 'OPENSTACKSDK_'))}
    env['OS_CLIENT_CONFIG_FILE'] = str(clouds)
    # openstacksdk's tox gives its functional tests 600 s each (the
    # default, 5 s, is for unit tests); the SDK retries a 409 for 15 s.
    env['OS_TEST_TIMEOUT'] = '600'
    result = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
         '-p', 'no:xdist', '-o', 'addopts=', '--junitxml', str(report),
         '--pyargs', '%s.%s' % (PACKAGE, module), *deselect],
        cwd=clouds.parent, env=env, capture_output=True, text=True,
        timeout=900)
    assert report.exists(), result.stdout[-4000:] + result.stderr[-4000:]
    return ElementTree.parse(report).getroot()


@pytest.mark.parametrize('module', MODULES)
def test_upstream_module_passes(module: str, clouds_yaml: pathlib.Path
                                ) -> None:
    root = _run(module, clouds_yaml)
    cases = root.iter('testcase')
    failed, skipped, passed = [], [], 0
    for case in cases:
        name = '%s::%s' % (case.get('classname', '').rsplit('.', 1)[-1],
                           case.get('name'))
        problem = case.find('failure')
        if problem is None:
            problem = case.find('error')
        skip = case.find('skipped')
        if problem is not None:
            failed.append('%s: %s' % (name, (problem.get('message') or '')
                                      [:300]))
        elif skip is not None:
            skipped.append((name, skip.get('message') or ''))
        else:
            passed += 1
    assert not failed, '\n'.join(failed)
    for name, message in skipped:
        match = _SKIP.search(message.strip())
        # Only a version ferrum does not claim may skip a test.
        assert match and (1, int(match.group(1))) > \
            microversion.MAX_VERSION, '%s skipped: %s' % (name, message)
    assert passed, 'no upstream test of %s ran' % module
