# SPDX-License-Identifier: Apache-2.0
"""The one retry on 409 placement.concurrent_update: how many calls, what
is retried, what reaches the caller."""

import pytest

from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement.resources import retry


def _conflict(code=client_mod.CONCURRENT_UPDATE):
    return errors.PlacementConflict(
        method='POST', url='/allocations', status=409, error_code=code,
        detail='generation moved')


def test_a_call_that_succeeds_is_made_once():
    calls = []
    assert retry.on_conflict(lambda n: calls.append(n) or 'done', 5) == 'done'
    assert calls == [1]


def test_a_concurrent_update_is_tried_again_with_the_call_number():
    calls, paused = [], []

    def call(number):
        calls.append(number)
        if number < 3:
            raise _conflict()
        return number

    assert retry.on_conflict(call, 5, pause=paused.append) == 3
    assert calls == [1, 2, 3]
    assert paused == [1, 2]


def test_the_last_conflict_reaches_the_caller_after_the_budget():
    calls = []

    def call(number):
        calls.append(number)
        raise _conflict()

    with pytest.raises(errors.PlacementConflict):
        retry.on_conflict(call, 3)
    assert calls == [1, 2, 3]


def test_another_refusal_is_not_retried():
    calls = []

    def call(number):
        calls.append(number)
        raise _conflict('placement.undefined_code')

    with pytest.raises(errors.PlacementConflict):
        retry.on_conflict(call, 5)
    assert calls == [1]


def test_a_budget_below_one_still_calls_once():
    assert retry.on_conflict(lambda n: n, 0) == 1


def test_again_chooses_what_is_retried():
    class Again(Exception):
        pass

    calls = []

    def call(number):
        calls.append(number)
        raise Again()

    with pytest.raises(Again):
        retry.on_conflict(call, 2, again=lambda exc: isinstance(exc, Again))
    assert calls == [1, 2]


def test_the_budget_is_the_option_plus_the_first_try(conf):
    conf.set_override('max_conflict_retries', 2, group='placement')
    assert retry.attempts(conf) == 3
