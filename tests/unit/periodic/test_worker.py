# SPDX-License-Identifier: Apache-2.0
"""The periodic collector and worker, driven by an injected clock."""

import threading

import pytest

from ferrum.periodic import decorators
from ferrum.periodic import worker
from tests.conftest import wait_for


class FakeClock:
    """A clock whose waits advance time instead of sleeping."""

    def __init__(self):
        self.now = 1000.0
        clock = self

        class Condition(threading.Condition):
            def wait(self, timeout=None):
                # futurist waits until the next task is due: jump there.
                if timeout:
                    clock.now += timeout
                super().wait(0.001)
                return False
        self.Condition = Condition

    def __call__(self):
        return self.now


class Tasks:
    def __init__(self):
        self.runs = {'fast': [], 'slow': [], 'off': [], 'broken': 0}

    @decorators.periodic(spacing=lambda conf: 10)
    def fast(self, ctx):
        self.runs['fast'].append(ctx.clock_now())

    @decorators.periodic(spacing=lambda conf: conf.conductor.heartbeat_timeout)
    def slow(self, ctx):
        self.runs['slow'].append(ctx.clock_now())

    @decorators.periodic(spacing=lambda conf: 0)
    def off(self, ctx):
        self.runs['off'].append(1)

    @decorators.periodic(spacing=lambda conf: 5)
    def broken(self, ctx):
        self.runs['broken'] += 1
        raise RuntimeError('boom')


class Ctx:
    def __init__(self, conf, clock):
        self.conf = conf
        self.clock_now = clock


def test_spacing_must_be_callable():
    with pytest.raises(TypeError, match='callable'):
        decorators.periodic(spacing=10)


def test_collect_deduplicates_by_class():
    a, b = Tasks(), Tasks()
    names = [name for _obj, name, _spec in worker.collect([a, b, a])]
    assert names == ['broken', 'fast', 'off', 'slow']


def test_worker_runs_on_schedule_skips_disabled_and_survives_failure(conf):
    conf.set_override('heartbeat_timeout', 60, 'conductor')
    clock = FakeClock()
    tasks = Tasks()
    periodic = worker.build_worker(Ctx(conf, clock), [tasks],
                                   now_func=clock, cond_cls=clock.Condition)
    thread = threading.Thread(target=periodic.start, daemon=True)
    thread.start()
    try:
        wait_for(lambda: len(tasks.runs['slow']) >= 3 and
                 tasks.runs['broken'] >= 3, what='periodic runs')
    finally:
        periodic.stop()
        periodic.wait()
    fast = tasks.runs['fast']
    slow = tasks.runs['slow']
    assert tasks.runs['off'] == []
    # Spacing follows the configuration, in (fake) seconds: a task never
    # runs before its interval is over. (The fake clock may overshoot, as
    # every wait advances it, so gaps can be longer.)
    assert min(b - a for a, b in zip(fast, fast[1:])) >= 10
    assert min(b - a for a, b in zip(slow, slow[1:])) >= 60
    assert len(fast) > 2 * len(slow)


def test_expected_failures_are_one_line_and_bugs_keep_their_traceback(
        caplog):
    import logging

    from ferrum.common import exception
    from ferrum.periodic import worker

    def task():
        pass
    for error, traceback in ((exception.DatabaseUnavailable(reason='gone'),
                              False),
                             (RuntimeError('a bug'), True)):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            worker._log_failure(task, type(error), error, None)
        [record] = caplog.records
        assert 'Periodic task task failed' in record.getMessage()
        if traceback:
            assert record.exc_info[1] is error
        else:
            assert not record.exc_info and 'gone' in record.getMessage()
