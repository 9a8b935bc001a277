# SPDX-License-Identifier: Apache-2.0
"""The committed sample config is what oslo-config-generator produces now."""

import os
import subprocess
import sys

import pytest

from ferrum.conf import api
from ferrum.conf import conductor
from ferrum.conf import database
from ferrum.conf import default

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
