# SPDX-License-Identifier: Apache-2.0
"""drivers/redfish/client/ against the real emulator and a silent BMC:
connections reused and bounded, and a BMC that never answers releases the
worker after the configured timeouts, naming the BMC."""

import logging
import socket
import time

import pytest

from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors
from tests.functional.redfish.emulator import apply_conf


def _power_state(conf, info):
    return client.call(conf, driver_info.parse(info), 'reading the power '
                       'state', lambda system: system.power_state)


def test_one_connection_per_bmc_reused_and_the_cache_bounded(
        conf, emulator, system, tmp_path, fresh_connections):
    apply_conf(conf, {'redfish': {'connection_cache_size': 2}})
    info = emulator.driver_info(system)
    params = driver_info.parse(info)
    with fresh_connections.using(conf, params) as first:
        pass
    with fresh_connections.using(conf, params) as again:
        assert again is first
    # Another System of the same BMC shares the connection.
    other = driver_info.parse(emulator.driver_info(emulator.uuids[-1]))
    with fresh_connections.using(conf, other) as shared:
        assert shared is first
    assert _power_state(conf, info).value == 'Off'
    assert len(fresh_connections) == 1

    # Other TLS settings or credentials are another connection; the
    # least recently used goes beyond [redfish] connection_cache_size.
    bundle = tmp_path / 'ca.pem'
    bundle.write_text('unused over http')
    for verify in ('false', str(bundle)):
        _power_state(conf, dict(info, redfish_verify_ca=verify))
    assert len(fresh_connections) == 2
    assert first.dropped
    with fresh_connections.using(conf, params) as later:
        assert later is not first


def test_a_refused_password_drops_its_connection(conf, emulator, system,
                                                 fresh_connections):
    apply_conf(conf)
    info = emulator.driver_info(system, redfish_password='not-it')
    with pytest.raises(errors.RedfishAuthError):
        _power_state(conf, info)
    assert len(fresh_connections) == 0


@pytest.fixture
def silent_bmc():
    """A TCP listener that never accepts or answers: a hung BMC."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(('127.0.0.1', 0))
    sock.listen(64)
    yield 'http://127.0.0.1:%d' % sock.getsockname()[1]
    sock.close()


def test_a_silent_bmc_releases_the_worker_after_the_timeouts(
        conf, silent_bmc, fresh_connections):
    apply_conf(conf, {'redfish': {'request_timeout': 1.0,
                                  'connect_timeout': 1.0,
                                  'server_side_retries': 1,
                                  'server_side_retries_delay': 0.1}})
    started = time.monotonic()
    with pytest.raises(errors.RedfishUnreachable) as caught:
        _power_state(conf, {'redfish_address': silent_bmc,
                            'redfish_system_id': '1',
                            'redfish_auth_type': 'basic'})
    elapsed = time.monotonic() - started
    assert str(caught.value).startswith('BMC %s did not answer' % silent_bmc)
    assert caught.value.code == 503
    # Timing is the behaviour here: 1 s per request, not sushy's 60 s
    # default; the bound is generous for a loaded machine.
    assert elapsed < 20, elapsed


def test_session_auth_on_a_bmc_without_sessions_says_so(
        conf, emulator, system, fresh_connections):
    apply_conf(conf)
    info = emulator.driver_info(system, redfish_auth_type='session')
    with pytest.raises(errors.RedfishUnsupported) as caught:
        _power_state(conf, info)
    # Not "check the password": the credentials are right.
    assert 'no SessionService' in str(caught.value)
    assert 'redfish_auth_type' in str(caught.value)
    assert 'redfish_password' not in str(caught.value)
    # auto falls back to HTTP Basic on the same BMC.
    assert _power_state(conf, dict(info, redfish_auth_type='auto')).value in (
        'On', 'Off')


def test_auto_auth_without_sessions_logs_no_failed_login(
        conf, emulator, system, fresh_connections, caplog):
    apply_conf(conf)
    caplog.set_level(logging.DEBUG)
    info = emulator.driver_info(system, redfish_auth_type='auto')
    assert _power_state(conf, info).value in ('On', 'Off')
    # sushy would try a session login first and log its 401 at ERROR
    # ("check credentials") for credentials that work.
    assert [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING] == []


def test_a_5xx_answer_is_an_outage_of_that_bmc(conf, emulator, system,
                                               fresh_connections):
    # The fake driver has no firmware: SimpleUpdate answers 500.
    apply_conf(conf)
    params = driver_info.parse(emulator.driver_info(system))

    def update(system):
        # No sushy resource posts it on the fake driver: its connector.
        system._conn.post(
            '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate',
            data={'ImageURI': 'http://127.0.0.1:9/none.bin',
                  'Targets': [system.path]})
    with pytest.raises(errors.RedfishUnreachable) as caught:
        client.call(conf, params, 'a firmware update', update)
    assert caught.value.code == 503
    # What the BMC answered, not "did not answer".
    assert str(caught.value).startswith(
        'BMC %s answered Redfish a firmware update with HTTP 500: '
        % emulator.url), str(caught.value)
    assert caught.value.status == 500
    assert emulator.password not in str(caught.value)
    # The BMC answered: its connection is kept.
    assert len(fresh_connections) == 1
