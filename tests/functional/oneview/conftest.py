# SPDX-License-Identifier: Apache-2.0
"""The OneView simulator as a child process, reset for every test.

One ``tools/oneview_simulator/ovsim.py`` process serves the whole test
session; the ``oneview_simulator`` fixture resets it (8 server hardware, no
profiles, faults, sessions or request counts) before each test and yields a
``tools.oneview_simulator.control.OneViewSimulator``. Its API, stable for
the driver's tests:

- ``address``: ``"127.0.0.1:PORT"``, hpOneView's config ``ip``;
  ``ca_file``: the CA bundle (``ssl_certificate``); ``username``,
  ``password``.
- ``client_config(api_version=800, timeout=10.0)``: a ready config dict
  for ``hpOneView.oneview_client.OneViewClient`` (also
  ``oneview_client_config(sim)`` below).
- ``ferrum_options()``: ``{manager_url, username, password,
  tls_cacert_file}`` for ferrum's ``[oneview]`` group.
- ``reset(hardware=N, page_size=None)``: N fresh server hardware, all of one
  type in one enclosure group, powered off, free; returns ``state()``.
- ``hardware_uris()``; ``hardware(uri)``: that hardware's ``uri``,
  ``name``, ``powerState``, ``serverProfileUri``, ``state``,
  ``serverHardwareTypeUri``, ``serverGroupUri``.
- ``template_uri`` (compatible server profile template),
  ``incompatible_template_uri`` (other hardware type and enclosure group),
  ``templates`` (by key, also ``virtual_mac`` and ``unmanaged_boot``),
  ``server_hardware_type_uri``, ``enclosure_group_uri``.
- ``take(hw_uri)``: a OneView user applies their own profile (409 if the
  hardware has one); ``free(hw_uri)``: removes whatever profile it has.
- ``fault(kind, **params)`` and ``clear_faults()``; kinds:
  ``appliance_down`` (every ``/rest`` call answers 503; with
  ``mode='reset', seconds=S`` every connection is reset for S seconds
  instead, /admin included), ``task_error`` (``match``: substring of
  "<task name> <resource uri>", ``count``, ``error_code``, ``message``),
  ``slow_task`` (``seconds``, ``match``), ``hang_request`` (``match``:
  substring of "METHOD /path", ``seconds``, ``count``: held, then 503
  without acting), ``expire_sessions`` (at once).
- ``state()``: hardware, profiles, the last 200 tasks, faults, sessions,
  ``hanging`` (the requests held now).
- ``request_counts()``: ``{"total": n, "requests": {"GET
  /rest/server-hardware/{id}": k, ...}}``; ``reset_request_counts()``.

Tasks complete at once unless a ``slow_task`` fault is set, so hpOneView's
task monitor never sleeps.
"""

import importlib.util
from typing import Any

import pytest

from ferrum.conductor import service
from tests.real import require_real
from tools.oneview_simulator.control import OneViewSimulator

HARDWARE = 8


@pytest.fixture(scope='session')
def _oneview_process(tmp_path_factory):
    if importlib.util.find_spec('trustme') is None:
        require_real('trustme')
    sim = OneViewSimulator(tmp_path_factory.mktemp('ovsim'),
                           hardware=HARDWARE)
    sim.start()
    yield sim
    sim.stop()


@pytest.fixture
def oneview_simulator(_oneview_process):
    """The session's simulator, reset to ``HARDWARE`` free server hardware."""
    _oneview_process.reset(HARDWARE)
    return _oneview_process


def oneview_client_config(sim: OneViewSimulator, **kwargs: Any
                          ) -> dict[str, Any]:
    """An hpOneView ``OneViewClient`` config dict for ``sim``."""
    return sim.client_config(**kwargs)


@pytest.fixture
def ov_conductor(conf, db, oneview_simulator):
    """A started conductor (no periodic worker) with the oneview hardware
    type on the simulator."""
    # Imported here: driver.py skips its importer without hpOneView, and
    # the simulator's own tests in this directory run without it.
    from tests.functional.oneview.driver import apply_conf
    apply_conf(conf, oneview_simulator)
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    yield svc
    svc.stop()


@pytest.fixture
def oneview_client(oneview_simulator):
    """A real hpOneView 5.3.0 client logged in to the simulator."""
    if importlib.util.find_spec('hpOneView') is None:
        require_real('hpOneView')
    from hpOneView import oneview_client
    return oneview_client.OneViewClient(oneview_simulator.client_config())
