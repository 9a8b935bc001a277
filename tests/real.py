# SPDX-License-Identifier: Apache-2.0
"""What a test does when a real component it needs is missing.

A developer's machine may lack PostgreSQL, ipmitool or Keystone: the test
is skipped. CI sets ``FERRUM_REQUIRE_REAL=1`` (``.ci/run``), and there a
missing component fails the test, so nothing passes by being skipped.
"""

import os
from typing import NoReturn

import pytest


def require_real(what: str) -> NoReturn:
    """Skip, or fail under FERRUM_REQUIRE_REAL=1, when ``what`` is missing."""
    if os.environ.get('FERRUM_REQUIRE_REAL') == '1':
        pytest.fail('%s is required (FERRUM_REQUIRE_REAL=1) but missing'
                    % what)
    pytest.skip('%s is not available' % what)
