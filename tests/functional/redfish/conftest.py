# SPDX-License-Identifier: Apache-2.0
"""The real sushy-emulator, one HTTP and one HTTPS process per session,
and a conductor with the redfish hardware type enabled. The HTTP one
reports every change it makes to ``notifications``.

Every test takes a System of its own (``system`` fixture), so a power
state left by one test never meets another.
"""

import itertools

import pytest

from ferrum.api import app as api_app
from ferrum.conductor import service
from ferrum.drivers.redfish import client
from tests import certificates
from tests.functional.redfish.emulator import Emulator
from tests.functional.redfish.emulator import apply_conf
from tests.functional.redfish.fake_bmc import FakeBMC
from tests.functional.redfish.notifications import Notifications
from tests.functional.redfish.proxy import Proxy

_SYSTEMS = 80
_next = itertools.count()


@pytest.fixture(scope='session')
def notifications():
    """What the shared emulator reports of each change it makes."""
    receiver = Notifications()
    receiver.start()
    yield receiver
    receiver.stop()


@pytest.fixture(scope='session')
def emulator(tmp_path_factory, notifications):
    emu = Emulator(tmp_path_factory.mktemp('redfish'), systems=_SYSTEMS,
                   notify_url=notifications.url)
    emu.start()
    yield emu
    emu.stop()


@pytest.fixture(scope='session')
def tls_emulator(tmp_path_factory):
    directory = tmp_path_factory.mktemp('redfish-tls')
    emu = Emulator(directory, systems=2,
                   tls=certificates.make(directory / 'certs'))
    emu.start()
    yield emu
    emu.stop()


@pytest.fixture
def system(emulator):
    """A System of the shared emulator that no other test uses."""
    index = next(_next)
    if index >= _SYSTEMS:
        pytest.fail('raise _SYSTEMS in tests/functional/redfish/conftest.py')
    return emulator.uuids[index]


@pytest.fixture
def redfish_conductor(conf, db):
    apply_conf(conf)
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    yield svc
    svc.stop()


@pytest.fixture
def redfish_api(conf, db, redfish_conductor):
    """Flask's client of an API on ``redfish_conductor``."""
    return api_app.create_app(conf, db,
                              redfish_conductor.manager).test_client()


@pytest.fixture
def proxy(emulator):
    """A recording proxy in front of the shared emulator (proxy.py)."""
    bmc = Proxy(emulator.url).start()
    yield bmc
    bmc.stop()


@pytest.fixture
def fake_bmc():
    """A Redfish BMC with sessions that counts what it is asked."""
    bmc = FakeBMC()
    bmc.start()
    yield bmc
    bmc.stop()


@pytest.fixture
def fresh_connections(monkeypatch):
    """The conductor's Redfish connections, empty for this test (other
    tests filled them), all closed after it."""
    connections = client.Connections()
    monkeypatch.setattr(client, 'CONNECTIONS', connections)
    yield connections
    connections.clear()
