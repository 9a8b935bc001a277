# SPDX-License-Identifier: Apache-2.0
"""What the API's ``GET /metrics`` serves, on a registry of the app's own.

- the fleet, read from the database (:mod:`ferrum.objects.fleet`: three
  grouped reads whatever the fleet's size), kept for ``[metrics]
  fleet_cache_seconds`` so that scrapes arriving together cost one read;
- the API's requests, counted and timed by route template (the route
  table's, never the raw path: a node's name or UUID is no label),
  method and status;
- the process's CPU and memory, and, where a conductor runs in the same
  process (``ferrum``, ``ferrum-api`` with the local transport), the
  conductor's service metrics (:mod:`ferrum.common.metrics`).

prometheus_client renders the text format; nothing here writes it.
"""

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from oslo_config import cfg
from prometheus_client import metrics as prom
from prometheus_client import process_collector
from prometheus_client import registry as registry_mod
from prometheus_client.metrics_core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from werkzeug import exceptions as http_exc
from werkzeug import routing

from ferrum.common import lease_statuses
from ferrum.common import metrics as service_metrics
from ferrum.conf import placement as placement_conf
from ferrum.db import api as db_api
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import base
from ferrum.objects import fleet as fleet_obj

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

#: Shown as zero when none exist, so that a panel or an alert on them
#: does not see the series vanish.
_ALLOCATION_STATES = tuple(sorted(allocation_obj.STATES))
_NODE_LABELS = ['provision_state', 'power_state', 'maintenance',
                'resource_class', 'conductor_group']


class FleetCollector(registry_mod.Collector):
    """The fleet gauges (see the module docstring)."""

    def __init__(self, conf: cfg.ConfigOpts, db: db_api.Database,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._conf = conf
        self._db = db
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._read: tuple[float, fleet_obj.Fleet] | None = None

    def fleet(self) -> fleet_obj.Fleet:
        """The counts, read again once older than the cache allows."""
        with self._lock:
            now = self._monotonic()
            keep = self._conf.metrics.fleet_cache_seconds
            if self._read is None or now - self._read[0] >= keep:
                self._read = (now, fleet_obj.read(
                    self._db, self._conf.conductor.heartbeat_timeout))
            return self._read[1]

    def collect(self) -> Iterator[Metric]:
        fleet = self.fleet()
        nodes = GaugeMetricFamily(
            'ferrum_nodes', 'Nodes by provision state, power state, '
            'maintenance, resource class and conductor group.',
            labels=_NODE_LABELS)
        for (provision, power, maintenance, rc, group), count in sorted(
                fleet.nodes.items()):
            nodes.add_metric([provision, power, str(maintenance).lower(), rc,
                              group], count)
        yield nodes
        projects = GaugeMetricFamily(
            'ferrum_nodes_by_project', 'Nodes with an owner or a lessee, by '
            'owner and lessee project ("" for unset).',
            labels=['owner', 'lessee'])
        for (owner, lessee), count in sorted(fleet.projects.items()):
            projects.add_metric([owner, lessee], count)
        yield projects
        yield _by_key(fleet, fleet_obj.ALLOCATIONS, 'ferrum_allocations',
                      'Allocations by state.', 'state', _ALLOCATION_STATES)
        yield _by_key(fleet, fleet_obj.LEASES, 'ferrum_leases',
                      'Leases by status.', 'status', lease_statuses.ALL)
        yield _by_key(fleet, fleet_obj.CONDUCTORS, 'ferrum_conductors_live',
                      'Live conductors (online, heartbeat recent) by '
                      'conductor group.', 'conductor_group', ())
        yield from self._placement(fleet)

    def _placement(self, fleet: fleet_obj.Fleet) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            'ferrum_placement_enabled', '1 when [placement] is configured.',
            value=int(placement_conf.enabled(self._conf)))
        yield GaugeMetricFamily(
            'ferrum_placement_outbox_rows', 'Node changes queued for a '
            'Placement push (the sync backlog).', value=fleet.outbox_rows)
        age = 0.0
        if fleet.outbox_oldest is not None:
            age = max(0.0, (base.utcnow() - fleet.outbox_oldest)
                      .total_seconds())
        yield GaugeMetricFamily(
            'ferrum_placement_outbox_oldest_age_seconds', 'Age of the '
            'oldest queued Placement change; 0 when the queue is empty.',
            value=age)
        yield _by_key(fleet, fleet_obj.PROVIDERS,
                      'ferrum_placement_providers', "Nodes' resource "
                      'providers by the state of their last push (synced, '
                      'conflict, clash).', 'state', ())
        yield _by_key(fleet, fleet_obj.PLACEMENT_VIEWS,
                      'ferrum_placement_conductors', "Conductors by their "
                      'view of Placement (ok, unavailable, too_old).',
                      'state', ())


def _by_key(fleet: fleet_obj.Fleet, kind: str, name: str, documentation: str,
            label: str, always: Iterable[str]) -> GaugeMetricFamily:
    counts = dict.fromkeys(always, 0)
    counts.update(fleet.counts.get(kind, {}))
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for key, count in sorted(counts.items()):
        family.add_metric([key], count)
    return family


#: Methods kept as they are; any other (a client may send anything) is
#: counted as "other", so that no client can add series at will.
_METHODS = frozenset({'GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE',
                      'OPTIONS'})
UNMATCHED = 'unmatched'
#: The environment key where the app notes the route template Flask
#: matched (``ferrum.api.app``): werkzeug's request object no longer
#: keeps itself there, and matching the URL again cost a second route
#: lookup on every request.
ROUTE = 'ferrum.route'


class RequestMetrics:
    """WSGI middleware around the whole app (authentication included, so
    a 401 from keystonemiddleware is counted too)."""

    def __init__(self, app: WSGIApp, url_map: routing.Map,
                 registry: registry_mod.CollectorRegistry) -> None:
        self.app = app
        self.url_map = url_map
        labels = ['route', 'method', 'status']
        self.requests = prom.Counter(
            'ferrum_api_requests', 'API requests answered, by route '
            'template, method and status.', labels, registry=registry)
        self.seconds = prom.Histogram(
            'ferrum_api_request_duration_seconds', 'Time to answer an API '
            'request, by route template, method and status.', labels,
            registry=registry)
        # Each label set's two series, looked up once: ``labels()``
        # checks and locks on every call. Bounded as the labels are (route
        # templates, methods, statuses).
        self._series: dict[tuple[str, str, str],
                           tuple[prom.Counter, prom.Histogram]] = {}

    def route(self, environ: dict[str, Any]) -> str:
        """The route template of the request, from the one route table."""
        # The rule Flask matched, when it did (noted under ROUTE). A 404,
        # a 405 or a request refused before the app saw it (a 401 of
        # keystonemiddleware) is matched here.
        noted = environ.get(ROUTE)
        if noted is not None:
            return str(noted)
        try:
            # Inside the try: a hostile Host header may not even bind.
            adapter = self.url_map.bind_to_environ(environ)
            try:
                endpoint, _args = adapter.match()
            except http_exc.MethodNotAllowed as exc:
                # The route exists; the method does not (a 405).
                endpoint, _args = adapter.match(
                    method=next(iter(exc.valid_methods or ['GET'])))
        except (http_exc.HTTPException, routing.RequestRedirect,
                ValueError):
            return UNMATCHED
        return str(endpoint)  # the app names each endpoint by its path

    def __call__(self, environ: dict[str, Any],
                 start_response: Callable[..., Any]) -> Iterable[bytes]:
        started = time.monotonic()
        status = ['500']

        def record_status(code: str, headers: Any, *args: Any) -> Any:
            status[0] = code.split(' ', 1)[0]
            return start_response(code, headers, *args)
        try:
            return self.app(environ, record_status)
        finally:
            method = environ.get('REQUEST_METHOD', '')
            labels = (self.route(environ),
                      method if method in _METHODS else 'other', status[0])
            series = self._series.get(labels)
            if series is None:
                series = self._series.setdefault(labels, (
                    self.requests.labels(*labels),
                    self.seconds.labels(*labels)))
            series[0].inc()
            series[1].observe(time.monotonic() - started)


def build_registry(conf: cfg.ConfigOpts, db: db_api.Database,
                   service: bool) -> registry_mod.CollectorRegistry:
    """The app's registry, request metrics aside (:class:`RequestMetrics`
    adds them).

    :param service: a conductor runs in this process: serve its metrics.
    """
    registry = registry_mod.CollectorRegistry()
    registry.register(FleetCollector(conf, db))
    process_collector.ProcessCollector(registry=registry)
    if service:
        registry.register(service_metrics.ServiceCollector())
    return registry
