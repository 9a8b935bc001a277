# SPDX-License-Identifier: Apache-2.0
"""The tests' clock moves only when told to."""

import datetime

from tests.clocks import Clock


def test_the_clock_stands_still_until_advanced():
    clock = Clock(datetime.datetime(2026, 11, 26, 20, 0, 0, 123456))
    assert clock() == clock() == datetime.datetime(2026, 11, 26, 20, 0)
    assert clock.later(90) == '2026-11-26T20:01:30Z'
    assert clock.after(-60) == datetime.datetime(2026, 11, 26, 19, 59)
    assert clock.advance(3600) == clock() == datetime.datetime(
        2026, 11, 26, 21, 0)
