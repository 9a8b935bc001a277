# SPDX-License-Identifier: Apache-2.0
"""One BMC simulator process per test session; each test gets a reset BMC."""

import collections
import importlib.util
import itertools
import shutil

import pytest

from tests.functional.ipmi.simulator import BmcSimulator
from tests.real import require_real

Bmc = collections.namedtuple('Bmc', 'port user password sim')
_COUNT = 8


@pytest.fixture(scope='session')
def bmc_simulator(tmp_path_factory):
    if shutil.which('ipmitool') is None:
        require_real('ipmitool')
    if importlib.util.find_spec('pyghmi') is None:
        require_real('pyghmi')
    sim = BmcSimulator(tmp_path_factory.mktemp('bmcs'),
                       bmcs=[('admin', 'pw-%d' % i) for i in range(_COUNT)])
    sim.start()
    yield sim
    sim.stop()


_next = itertools.count()


@pytest.fixture
def bmc(bmc_simulator):
    """A BMC of the shared simulator, reset; tests run one at a time."""
    port = bmc_simulator.ports[next(_next) % _COUNT]
    bmc_simulator.reset(port)
    user, password = bmc_simulator.credentials[port]
    return Bmc(port, user, password, bmc_simulator)
