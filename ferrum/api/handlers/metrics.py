# SPDX-License-Identifier: Apache-2.0
"""``GET /metrics``: the Prometheus text format (see
:mod:`ferrum.api.metrics` for what it holds, doc/observability.md for how
Prometheus scrapes it). Not under ``/v1``: not an Ironic resource, and
where a scraper looks by default.

Under ``auth_strategy = keystone`` a caller needs the
``baremetal:metrics:get`` rule (a system reader by default), unless it
connects from a network of ``[metrics] allowed_scrapers``
(:mod:`ferrum.api.auth` lets those through without a token).
"""

import flask
from prometheus_client import exposition

from ferrum.api import access
from ferrum.api import auth

REGISTRY = 'FERRUM_METRICS'


def get_metrics() -> flask.Response:
    if not auth.allowed_scraper(flask.request.environ):
        access.check('baremetal:metrics:get')
    # The format the scraper asks for (the text format by default,
    # OpenMetrics on request), as prometheus_client's own server decides.
    encode, content_type = exposition.choose_encoder(
        flask.request.headers.get('Accept', ''))
    body = encode(flask.current_app.config[REGISTRY])
    return flask.Response(body, content_type=content_type)
