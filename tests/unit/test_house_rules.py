# SPDX-License-Identifier: Apache-2.0
"""House rules a reviewer checks first, enforced: sizes, names, types."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
MAX_LINES = 800


def _modules(top):
    for folder, _dirs, files in os.walk(os.path.join(ROOT, top)):
        for name in files:
            if name.endswith('.py'):
                yield os.path.join(folder, name)


def test_no_module_is_over_the_line_budget():
    big = []
    for path in list(_modules('ferrum')) + list(_modules('tools')):
        with open(path) as source:
            count = sum(1 for _ in source)
        if count > MAX_LINES:
            big.append('%s (%d lines)' % (os.path.relpath(path, ROOT), count))
    assert big == [], 'split these by concern: %s' % big


def test_no_grab_bag_modules():
    bad = [os.path.relpath(p, ROOT) for p in _modules('ferrum')
           if os.path.basename(p) in ('utils.py', 'helpers.py', 'misc.py')]
    assert bad == [], 'name modules after what they hold: %s' % bad


def test_package_type_checks_strictly():
    result = subprocess.run(
        [sys.executable, '-m', 'mypy', '--strict', '--ignore-missing-imports',
         'ferrum'], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
