# SPDX-License-Identifier: Apache-2.0
"""Waiting for something to happen: poll with a deadline, never sleep a
fixed time (a loaded machine makes any fixed time too short)."""

import time
from collections.abc import Callable
from typing import Any

import pytest


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0,
             interval: float = 0.005, what: str = 'condition') -> Any:
    """Poll ``predicate`` until it returns something truthy, or fail."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail('timed out after %.1fs waiting for %s' % (timeout,
                                                                  what))
        time.sleep(interval)
