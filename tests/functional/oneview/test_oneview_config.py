# SPDX-License-Identifier: Apache-2.0
"""Bad [oneview] configuration and bad input, against the simulator (real
hpOneView over TLS): the conductor refuses to start on what it can check
alone, and every other failure is a 4xx naming its cause, or a 503 when the
appliance is away; never a 500. (Not 409: python-ironicclient retries it.)
"""

import json
import logging

import pytest

from ferrum.api import app as api_app
from ferrum.common import exception
from ferrum.conductor import service
from ferrum.objects import node as node_obj
from tests.functional.oneview.driver import apply_conf
from tests.functional.oneview.driver import enroll
from tests.polling import wait_for

V = {'X-OpenStack-Ironic-API-Version': '1.65'}


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


@pytest.mark.parametrize('option, value, words', [
    ('manager_url', None, 'manager_url'),
    ('username', None, 'set username'),
    ('tls_cacert_file', None, 'tls_cacert_file'),
    ('tls_cacert_file', '/nonexistent/ca.pem',
     'tls_cacert_file /nonexistent/ca.pem is not a readable file'),
    ('tls_cacert_file', 'NOT-A-CERTIFICATE', 'holds no CA certificate'),
])
def test_start_up_refuses_incomplete_options(conf, db, oneview_simulator,
                                             tmp_path, option, value, words):
    apply_conf(conf, oneview_simulator)
    if value == 'NOT-A-CERTIFICATE':
        value = tmp_path / 'not-a-ca.pem'
        value.write_text('this is no certificate\n')
        value = str(value)
    conf.set_override(option, value, 'oneview')
    with pytest.raises(exception.DriverLoadError) as caught:
        service.ConductorService(conf, db=db).start(start_periodics=False)
    message = str(caught.value)
    assert words in message
    # It names the entry point, as any driver problem does.
    assert 'ferrum.hardware.interfaces.' in message and 'oneview' in message


@pytest.fixture
def api(conf, db, oneview_simulator):
    """A started conductor and its API, for options a test changes first."""
    def start(**options):
        apply_conf(conf, oneview_simulator)
        for name, value in options.items():
            conf.set_override(name, value, 'oneview')
        conductor = service.ConductorService(conf, db=db)
        conductor.start(start_periodics=False)
        started.append(conductor)
        app = api_app.create_app(conf, db,
                                 conductor.manager)
        return conductor, app.test_client()
    started: list[service.ConductorService] = []
    yield start
    for conductor in started:
        conductor.stop()


def _deploy(client, node, db):
    """Ask to deploy ``node`` (put in "available" directly): deploy
    validation asks the appliance at once, within the request."""
    stored = node_obj.Node.get(db, node.id)
    stored.provision_state = 'available'
    stored.save()
    return client.put('/v1/nodes/%s/states/provision' % node.uuid,
                      headers=V, json={'target': 'active'})


def test_wrong_password_is_400_and_logins_back_off(api, oneview_simulator,
                                                   caplog, db):
    with caplog.at_level(logging.DEBUG):
        conductor, client = api(password='not-the-password')
        # Checked once at start-up, in the background: a warning, and the
        # conductor runs (the appliance may be the one that is wrong).
        wait_for(lambda: 'could not be verified at start-up' in caplog.text,
                 timeout=30, what='the start-up login check')
        node = enroll(conductor, oneview_simulator)
        first = _deploy(client, node, db)
        second = _deploy(client, node, db)
    assert first.status_code == 400, first.get_data(as_text=True)
    assert 'Check [oneview] username and password' in _fault(first)
    assert second.status_code == 400
    assert 'Logins are paused' in _fault(second)
    text = caplog.text
    assert 'not-the-password' not in text
    assert 'Traceback' not in text  # hpOneView's own is cut to one line


def test_wrong_ca_is_400_naming_the_option(api, oneview_simulator,
                                           tmp_path, db):
    import trustme
    other = tmp_path / 'other-ca.pem'
    trustme.CA().cert_pem.write_to_path(str(other))
    conductor, client = api(tls_cacert_file=str(other))
    node = enroll(conductor, oneview_simulator)
    response = _deploy(client, node, db)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert 'tls_cacert_file (%s)' % other in _fault(response)


def test_a_ca_file_removed_at_run_time_is_400_naming_it(
        api, oneview_simulator, tmp_path, db):
    """Not 503 "did not answer": the appliance is fine, the file is not."""
    ca_file = tmp_path / 'ca.pem'
    ca_file.write_bytes(open(oneview_simulator.ca_file, 'rb').read())
    conductor, client = api(tls_cacert_file=str(ca_file))
    node = enroll(conductor, oneview_simulator)
    ca_file.unlink()
    response = _deploy(client, node, db)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert 'tls_cacert_file %s is not a readable file' % ca_file in (
        _fault(response))
    ca_file.write_text('no certificate here\n')
    response = _deploy(client, node, db)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert 'tls_cacert_file %s holds no CA certificate' % ca_file in (
        _fault(response))


def test_unknown_server_hardware_is_400_naming_the_uri(api,
                                                       oneview_simulator,
                                                       db):
    conductor, client = api()
    node = enroll(conductor, oneview_simulator)
    missing = '/rest/server-hardware/no-such-hardware'
    stored = node_obj.Node.get(db, node.id)
    stored.driver_info = dict(stored.driver_info,
                              server_hardware_uri=missing)
    stored.save()
    response = _deploy(client, node, db)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert missing in _fault(response)


def test_appliance_down_is_503(api, oneview_simulator, db):
    conductor, client = api()
    node = enroll(conductor, oneview_simulator)
    oneview_simulator.fault('appliance_down')
    try:
        response = _deploy(client, node, db)
    finally:
        oneview_simulator.clear_faults()
    assert response.status_code == 503, response.get_data(as_text=True)


def test_verify_failure_advice_fits_the_cause(api, oneview_simulator, db):
    conductor, _client = api()
    node = enroll(conductor, oneview_simulator)
    oneview_simulator.fault('appliance_down')
    try:
        conductor.manager.do_provisioning_action(node.uuid, 'manage')
        settled = wait_for(
            lambda: (lambda n: n if n.provision_state == 'enroll'
                     and n.reservation is None and n.last_error else None)(
                node_obj.Node.get(db, node.id)), timeout=30,
            what='the failed verification')
    finally:
        oneview_simulator.clear_faults()
    error = settled.last_error
    assert 'run "manage" again once it answers' in error
    assert 'driver_info' not in error and '..' not in error
