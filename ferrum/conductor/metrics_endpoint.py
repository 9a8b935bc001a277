# SPDX-License-Identifier: Apache-2.0
"""A conductor's own metrics endpoint: ``GET /metrics`` on ``[metrics]
host_ip`` and ``port`` (0: none), served by prometheus_client's WSGI
server on a background thread, started first and stopped last with the
conductor service. It serves :mod:`ferrum.common.metrics` (periodic
tasks, node locks, driver calls, power sync, lease engine, Placement
pushes) and the process's CPU and memory, without authentication: it
holds counts and timings only.
"""

import logging
import threading
from wsgiref import simple_server

from oslo_config import cfg
from prometheus_client import exposition

from ferrum.common import exception
from ferrum.common import metrics

LOG = logging.getLogger(__name__)


class MetricsBindFailed(exception.FerrumException):
    msg_fmt = ('Cannot serve the conductor metrics on %(host)s port '
               '%(port)d: %(reason)s. Change [metrics] host_ip or port (0 '
               'serves none), or stop what already listens there.')


class MetricsEndpoint:
    """The endpoint; nothing is bound until :meth:`start`."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self._host: str = conf.metrics.host_ip
        self._port: int = conf.metrics.port
        self._server: simple_server.WSGIServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str | None:
        """Where it serves, once started; None when disabled."""
        if self._server is None:
            return None
        host = self._host if ':' not in self._host else '[%s]' % self._host
        return 'http://%s:%d/metrics' % (host, self._server.server_port)

    def start(self) -> None:
        """Bind and serve, unless ``[metrics] port`` is 0.

        :raises MetricsBindFailed: the address cannot be bound.
        """
        if not self._port or self._server is not None:
            return
        try:
            self._server, self._thread = exposition.start_wsgi_server(
                self._port, addr=self._host,
                registry=metrics.service_registry())
        except OSError as exc:
            raise MetricsBindFailed(host=self._host, port=self._port,
                                    reason=exc.strerror or str(exc)
                                    ) from exc
        LOG.info('Serving the conductor metrics on %s', self.url)

    def stop(self) -> None:
        """Stop serving; safe to repeat."""
        if self._server is None or self._thread is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        LOG.info('Stopped serving the conductor metrics on %s:%d',
                 self._host, self._port)
        self._server = self._thread = None
