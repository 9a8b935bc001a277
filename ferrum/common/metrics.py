# SPDX-License-Identifier: Apache-2.0
"""The service metrics a conductor records, and the collector serving them.

The instruments are prometheus_client's, created without a registry: the
process records into them wherever the work happens (the periodic worker,
the task manager, the driver calls, the power sync, the lease engine, the
Placement push), and every endpoint that serves them (a conductor's
metrics endpoint, the all-in-one API's ``/metrics``) registers one
:class:`ServiceCollector` on a registry of its own. Nothing is put on
prometheus_client's global registry, so two apps in one process (tests)
never collide on a name.

They are per process, as Prometheus counts any process: two conductors
in one test process share them.
"""

from collections.abc import Iterator

from prometheus_client import metrics as prom
from prometheus_client import process_collector
from prometheus_client import registry
from prometheus_client.metrics_core import Metric

#: Seconds, from a fast driver read to a slow deploy step or a large run.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            30.0, 60.0, 120.0, 300.0, float('inf'))

PERIODIC_SECONDS = prom.Histogram(
    'ferrum_periodic_task_duration_seconds',
    'How long each run of a periodic task took, failed runs included.',
    ['task'], registry=None, buckets=_BUCKETS)
PERIODIC_FAILURES = prom.Counter(
    'ferrum_periodic_task_failures',
    'Runs of a periodic task that raised (the log says why).',
    ['task'], registry=None)
LOCK_WAIT_SECONDS = prom.Histogram(
    'ferrum_node_lock_wait_seconds',
    'How long the task manager waited for a node lock, by outcome: '
    'acquired, or locked (still held by another task after every retry).',
    ['outcome'], registry=None, buckets=_BUCKETS)
DRIVER_CALL_SECONDS = prom.Histogram(
    'ferrum_driver_call_duration_seconds',
    'How long a driver hook took, by hardware type, interface kind and '
    'hook.', ['hardware_type', 'interface', 'method'], registry=None,
    buckets=_BUCKETS)
DRIVER_CALL_ERRORS = prom.Counter(
    'ferrum_driver_call_errors',
    'Driver hooks that raised, by hardware type, interface kind and hook.',
    ['hardware_type', 'interface', 'method'], registry=None)
POWER_SYNC_MISMATCHES = prom.Counter(
    'ferrum_power_sync_mismatches',
    'Nodes the power sync found in another power state than recorded, by '
    'action: recorded (the database took the BMC\'s state) or forced (the '
    'node was set back, [conductor] force_power_state_during_sync).',
    ['action'], registry=None)
LEASE_ENGINE_SECONDS = prom.Histogram(
    'ferrum_lease_engine_run_duration_seconds',
    'How long one run of the lease engine took.', registry=None,
    buckets=_BUCKETS)
PLACEMENT_PUSH_SECONDS = prom.Histogram(
    'ferrum_placement_push_duration_seconds',
    'How long one round of Placement pushes took (a batch of nodes, by '
    'outcome: done, or unavailable while Placement is away).',
    ['outcome'], registry=None, buckets=_BUCKETS)

SERVICE_METRICS: tuple[prom.MetricWrapperBase, ...] = (
    PERIODIC_SECONDS, PERIODIC_FAILURES, LOCK_WAIT_SECONDS,
    DRIVER_CALL_SECONDS, DRIVER_CALL_ERRORS, POWER_SYNC_MISMATCHES,
    LEASE_ENGINE_SECONDS, PLACEMENT_PUSH_SECONDS)


class ServiceCollector(registry.Collector):
    """The instruments above, for one registry."""

    def collect(self) -> Iterator[Metric]:
        for instrument in SERVICE_METRICS:
            yield from instrument.collect()


def service_registry() -> registry.CollectorRegistry:
    """A registry of the service metrics and the process's own (CPU,
    memory, open files): what a conductor's endpoint serves."""
    reg = registry.CollectorRegistry()
    reg.register(ServiceCollector())
    process_collector.ProcessCollector(registry=reg)
    return reg
