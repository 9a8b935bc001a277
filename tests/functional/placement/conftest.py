# SPDX-License-Identifier: Apache-2.0
"""The real Placement, in-process through its own fixture or under
gunicorn, and conductors syncing to it or allocating through it.

``PlacementFixture`` is the fixture nova's functional tests use: the
Placement WSGI app on a fresh in-memory database, reached through
wsgi-intercept, which intercepts ``requests`` and so keystoneauth1.
Requests are counted and races staged on the client's side, through
``PlacementClient.observers`` (doc/testing.md).
The helpers these fixtures use are in deployment.py and scenario.py.
"""

import uuid

import pytest

from ferrum.conductor import service
from ferrum.placement import client as client_mod
from tests.clocks import Clock
from tests.functional.placement.deployment import PlacementProcess
from tests.functional.placement.deployment import configure
from tests.functional.placement.deployment import one_at_a_time
from tests.functional.placement.scenario import make_api
from tests.real import require_real


@pytest.fixture
def placement():
    """The in-process Placement. Its in-memory database is one
    connection: requests from the sync worker and the conductor at once
    fail there with 500s, as they never do under gunicorn, which serves
    one at a time; so this one serves them one at a time too."""
    try:
        from placement import deploy
        from placement.tests.functional.fixtures import placement as fixture
        from wsgi_intercept import interceptor
    except ImportError:
        require_real('openstack-placement (pip install -e .[test])')
    running = fixture.PlacementFixture(token='admin', use_intercept=False)
    running.setUp()
    app = one_at_a_time(deploy.loadapp(running.conf_fixture.conf))
    running.endpoint = 'http://%s/placement' % uuid.uuid4()
    intercept = interceptor.RequestsInterceptor(lambda: app,
                                                url=running.endpoint)
    intercept.install_intercept()
    running.addCleanup(intercept.uninstall_intercept)
    yield running
    running.cleanUp()


@pytest.fixture
def pconf(conf, placement):
    configure(conf, placement.endpoint)
    conf.set_override('poll_interval', 0.02, group='placement')
    conf.set_override('outage_retry_interval', 1, group='placement')
    # The fixture's in-memory database is one connection: one request at
    # a time (the gunicorn Placement serves the concurrent tests).
    conf.set_override('push_workers', 1, group='placement')
    return conf


@pytest.fixture
def pclient(pconf):
    """A second client, as an operator's tool or a foreign writer uses."""
    return client_mod.PlacementClient(pconf)


@pytest.fixture
def clock():
    """The conductors' and their APIs' now (``synced``, ``backend``; not
    ``gbackend``, which runs beside conductor processes on the wall
    clock): it moves only when the test moves it."""
    return Clock()


@pytest.fixture
def synced(pconf, db, clock):
    """A conductor with Placement sync on (no periodic worker)."""
    svc = service.ConductorService(pconf, db=db, clock=clock)
    svc.start(start_periodics=False)
    yield svc
    svc.stop()


@pytest.fixture
def backend(pconf, db, clock):
    """A conductor with the placement allocation backend."""
    pconf.set_override('backend', 'placement', group='allocation')
    svc = service.ConductorService(pconf, db=db, clock=clock)
    svc.start(start_periodics=False)
    yield svc
    svc.stop()


@pytest.fixture
def api(backend, pconf, db):
    """The API client on ``backend``'s conductor."""
    return make_api(pconf, db, backend.manager)


@pytest.fixture
def calls(request):
    """Every request the test's conductor (``gbackend`` if the test has
    it, else ``backend``) sends to Placement, in order: (method, path)."""
    name = 'gbackend' if 'gbackend' in request.fixturenames else 'backend'
    conductor = request.getfixturevalue(name)
    seen = []
    conductor.placement.client.observers.append(
        lambda method, url, body: seen.append((method, url.split('?')[0])))
    return seen


@pytest.fixture
def placement_process(tmp_path):
    try:
        import placement.wsgi  # noqa: F401
    except ImportError:
        require_real('openstack-placement (pip install -e .[test])')
    running = PlacementProcess(tmp_path / 'placement')
    running.start()
    yield running
    running.kill()


@pytest.fixture
def gconf(conf, db, placement_process):
    """``conf`` on the gunicorn Placement, with the placement allocation
    backend."""
    configure(conf, placement_process.endpoint)
    conf.set_override('poll_interval', 0.02, group='placement')
    conf.set_override('outage_retry_interval', 1, group='placement')
    conf.set_override('backend', 'placement', group='allocation')
    yield conf


@pytest.fixture
def gbackend(gconf, db):
    """A conductor with the placement allocation backend on the gunicorn
    Placement."""
    svc = service.ConductorService(gconf, db=db)
    svc.start(start_periodics=False)
    yield svc
    svc.stop()

