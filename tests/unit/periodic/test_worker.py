# SPDX-License-Identifier: Apache-2.0
"""The periodic collector and worker, driven by an injected clock."""

import threading

import futurist
import pytest

from ferrum.common import exception
from ferrum.periodic import decorators
from ferrum.periodic import worker
from tests.polling import wait_for


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
    # Tasks run on the worker's own thread: the fake clock moves only while
    # the worker waits, never while a task is still running on a pool
    # thread, so the counts below hold however loaded the machine is.
    periodic = worker.build_worker(Ctx(conf, clock), [tasks],
                                   now_func=clock, cond_cls=clock.Condition,
                                   executor=futurist.SynchronousExecutor)
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
    assert min(b - a for a, b in zip(fast, fast[1:], strict=False)) >= 10
    assert min(b - a for a, b in zip(slow, slow[1:], strict=False)) >= 60
    assert len(fast) > 2 * len(slow)


class Failing:
    """Two tasks that fail every run: an expected failure and a bug."""

    @decorators.periodic(spacing=lambda conf: 5)
    def expected(self, ctx):
        raise exception.DatabaseUnavailable(reason='gone away')

    @decorators.periodic(spacing=lambda conf: 7)
    def bug(self, ctx):
        raise RuntimeError('a bug')


def test_failures_are_logged_expected_in_one_line_bugs_with_traceback(
        conf, caplog):
    # A real futurist PeriodicWorker calls the failure callback: its
    # signature must match futurist's call, or only a TypeError is logged.
    import logging
    clock = FakeClock()
    periodic = worker.build_worker(Ctx(conf, clock), [Failing()],
                                   now_func=clock, cond_cls=clock.Condition)
    caplog.set_level(logging.WARNING)
    thread = threading.Thread(target=periodic.start, daemon=True)
    thread.start()

    def records(name):
        return [r for r in caplog.records
                if r.name == worker.LOG.name and name in r.getMessage()]
    try:
        wait_for(lambda: records('Failing.expected') and
                 records('Failing.bug'), what='both failures logged')
    finally:
        periodic.stop()
        periodic.wait()
    futurist_errors = [r.getMessage() for r in caplog.records
                       if r.name.startswith('futurist')]
    assert futurist_errors == []
    expected = records('Failing.expected')[0]
    assert expected.levelno == logging.WARNING
    assert expected.getMessage() == (
        'Periodic task Failing.expected failed this run: %s'
        % exception.DatabaseUnavailable(reason='gone away'))
    assert not expected.exc_info
    bug = records('Failing.bug')[0]
    assert bug.levelno == logging.ERROR
    assert 'runs again in 7.0s' in bug.getMessage()
    assert isinstance(bug.exc_info[1], RuntimeError)
    assert bug.exc_info[2] is not None
    assert 'a bug' in caplog.text and 'Traceback' in caplog.text

