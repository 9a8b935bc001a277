# SPDX-License-Identifier: Apache-2.0
"""A conductor's service metrics at its own ``[metrics]`` address (issue
31): periodic task durations and failures, node lock waits, driver call
latency and errors, power sync mismatches; scraped over HTTP from the
running conductor and parsed with prometheus_client's parser.

The metrics are per process, so the tests compare values before and
after what they do.
"""

import socket
from unittest import mock

import pytest
import requests
from prometheus_client import parser

from ferrum.common import exception
from ferrum.common import metrics
from ferrum.common import states
from ferrum.conductor import driver_calls
from ferrum.conductor import metrics_endpoint
from ferrum.conductor import service
from ferrum.drivers.fake import interfaces as fake
from ferrum.objects import node as node_obj
from ferrum.periodic import decorators
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import to_state
from tests.polling import wait_for


class Broken:
    """A periodic task that fails at every run."""

    runs = 0

    @decorators.periodic(spacing=lambda conf: 1, run_immediately=True)
    def always_fails(self, ctx):
        Broken.runs += 1
        raise exception.DriverError(reason='broken on purpose')


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def sample(url, name, **labels):
    """The value of ``name`` with ``labels`` (0 when absent)."""
    text = requests.get(url, timeout=10).text
    for family in parser.text_string_to_metric_families(text):
        for found in family.samples:
            if found.name == name and all(
                    found.labels.get(k) == v for k, v in labels.items()):
                return found.value
    return 0.0


@pytest.fixture
def running(conf, db):
    conf.set_override('port', free_port(), 'metrics')
    conf.set_override('sync_power_state_interval', 1, 'conductor')
    conductor = service.ConductorService(conf, db=db,
                                         extra_periodics=[Broken()])
    conductor.start(start_periodics=False)
    yield conductor, conductor.metrics.url
    conductor.stop()


def test_periodics_and_a_failing_driver_hook_appear(running, db):
    conductor, url = running
    assert url.startswith('http://127.0.0.1:')
    locks = sample(url, 'ferrum_node_lock_wait_seconds_count',
                   outcome='acquired')
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    node.driver_info['fake_fail'] = ['power']
    node.save()
    labels = {'hardware_type': 'fake-hardware', 'interface': 'power',
              'method': 'get_power_state'}
    errors = sample(url, 'ferrum_driver_call_errors_total', **labels)
    calls = sample(url, 'ferrum_driver_call_duration_seconds_count',
                   **labels)
    sync = {'task': 'PowerSync.sync_power_states'}
    broken = {'task': 'Broken.always_fails'}
    syncs = sample(url, 'ferrum_periodic_task_duration_seconds_count', **sync)
    failures = sample(url, 'ferrum_periodic_task_failures_total', **broken)
    conductor.start_periodics()
    wait_for(lambda: sample(url, 'ferrum_periodic_task_duration_seconds_'
                            'count', **sync) > syncs, timeout=60,
             what='a power sync run')
    wait_for(lambda: sample(url, 'ferrum_periodic_task_failures_total',
                            **broken) > failures, timeout=60,
             what='a failed periodic run')
    assert sample(url, 'ferrum_driver_call_errors_total', **labels) > errors
    assert sample(url, 'ferrum_driver_call_duration_seconds_count',
                  **labels) > calls
    # Moving the node to manageable took its lock.
    assert sample(url, 'ferrum_node_lock_wait_seconds_count',
                  outcome='acquired') > locks
    assert sample(url, 'ferrum_periodic_task_duration_seconds_count',
                  **broken) >= 1
    assert node.uuid not in requests.get(url, timeout=10).text


def test_power_sync_mismatches_are_counted(conductor, db, conf):
    conf.set_override('force_power_state_during_sync', False, 'conductor')
    node = to_state(conductor.manager, db, enroll(conductor.manager),
                    'manageable')
    recorded = metrics.POWER_SYNC_MISMATCHES.labels('recorded')
    before = recorded._value.get()
    # The fake BMC answers what the node row says; here it answers "on"
    # for a node recorded "off" (a class-level replacement, which the
    # timing wrapper on the instance honours).
    with mock.patch.object(fake.FakePower, 'get_power_state', autospec=True,
                           return_value=states.POWER_ON):
        conductor.power_sync.sync_power_states(conductor.ctx)
    assert node_obj.Node.get(db, node.id).power_state == states.POWER_ON
    assert recorded._value.get() == before + 1
    conductor.power_sync.sync_power_states(conductor.ctx)
    assert recorded._value.get() == before + 1  # no mismatch this time


def test_instrumentation_keeps_the_class_and_its_steps(conductor):
    for kind, loaded in conductor.ctx.drivers.interfaces.items():
        for obj in loaded.values():
            assert isinstance(obj, type(obj))
            for name in driver_calls.hooks(kind):
                assert name in vars(obj), (kind, name)
    power = conductor.ctx.drivers.interfaces['power']['fake']
    assert type(power) is fake.FakePower
    # Instrumenting twice (a restart in-process) wraps once.
    wrapped = vars(power)['get_power_state']
    driver_calls.instrument(conductor.ctx.drivers)
    assert vars(power)['get_power_state'] is wrapped


def test_port_0_serves_nothing_and_a_taken_port_is_named(conf, db):
    assert metrics_endpoint.MetricsEndpoint(conf).url is None
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        conf.set_override('port', port, 'metrics')
        conductor = service.ConductorService(conf, db=db)
        with pytest.raises(metrics_endpoint.MetricsBindFailed) as caught:
            conductor.start(start_periodics=False)
    assert 'port %d' % port in str(caught.value)
    assert '[metrics] host_ip or port' in str(caught.value)
    # Nothing was registered: the conductor stopped before its database.
    assert conductor.ctx is None


def test_the_lease_engine_run_is_timed(conductor):
    from ferrum.leases import engine
    runs = metrics.LEASE_ENGINE_SECONDS.collect()[0]
    before = [s.value for s in runs.samples if s.name.endswith('_count')][0]
    engine.LeaseEngine().run_leases(conductor.ctx)
    runs = metrics.LEASE_ENGINE_SECONDS.collect()[0]
    assert [s.value for s in runs.samples
            if s.name.endswith('_count')][0] == before + 1
