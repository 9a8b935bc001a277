# SPDX-License-Identifier: Apache-2.0
"""The committed sample config is what oslo-config-generator produces now."""

import os
import subprocess
import sys

import pytest
from keystoneauth1 import loading as ks_loading

from ferrum import conf as conf_pkg
from ferrum.conf import api
from ferrum.conf import conductor
from ferrum.conf import database
from ferrum.conf import default
from ferrum.conf import opts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
SAMPLE = os.path.join(ROOT, 'etc', 'ferrum', 'ferrum.conf.sample')


def test_sample_config_is_current(tmp_path):
    out = tmp_path / 'ferrum.conf.sample'
    generator = os.path.join(os.path.dirname(sys.executable),
                             'oslo-config-generator')
    # The worktree's ferrum, whichever checkout the venv installed.
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([generator, '--namespace', 'ferrum', '--namespace',
                    'oslo.log', '--namespace', 'oslo.policy', '--namespace',
                    'keystonemiddleware.auth_token', '--output-file',
                    str(out)], check=True, env=env)
    with open(SAMPLE) as committed:
        assert committed.read() == out.read_text(), (
            'etc/ferrum/ferrum.conf.sample is stale: run "make genconfig" '
            'and commit the result')


@pytest.mark.parametrize('group, opt', [
    (module.__name__, opt) for module in (default, conductor, database, api)
    for opt in module.opts] + [(api.__name__, opt) for opt in api.auth_opts])
def test_every_option_has_a_full_help_text(group, opt):
    assert opt.help and len(opt.help) > 30 and opt.help.rstrip().endswith(
        '.'), '[%s] %s needs a full-sentence help text' % (group, opt.name)


def test_every_sample_option_is_registered_by_new_conf():
    """The groups are found once (ferrum.conf.opts.group_modules): what the
    sample file lists, a service's configuration has."""
    conf = conf_pkg.new_conf()
    listed = [(group, opt.dest) for group, group_opts in opts.list_opts()
              for opt in group_opts]
    assert len(listed) > 100
    # keystoneauth registers its plugins' options when one is loaded.
    plugins = {opt.dest for name in ('password', 'admin_token')
               for opt in ks_loading.get_auth_plugin_conf_options(name)}
    missing = [(group, dest) for group, dest in listed
               if dest not in (conf if group == 'DEFAULT' else conf[group])
               and dest not in plugins]
    assert missing == []
    groups = {group for group, _dest in listed}
    assert {'DEFAULT', 'agent', 'conductor', 'database', 'json_rpc',
            'placement', 'redfish'} <= groups


def test_a_module_that_is_no_option_group_is_refused(monkeypatch, tmp_path):
    stray = tmp_path / 'stray.py'
    stray.write_text('VALUE = 1\n')
    monkeypatch.setattr(conf_pkg, '__path__',
                        list(conf_pkg.__path__) + [str(tmp_path)])
    opts.group_modules.cache_clear()
    try:
        with pytest.raises(TypeError, match='stray.py is neither'):
            opts.group_modules()
    finally:
        sys.modules.pop('ferrum.conf.stray', None)
        opts.group_modules.cache_clear()
