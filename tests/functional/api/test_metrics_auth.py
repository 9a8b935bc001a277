# SPDX-License-Identifier: Apache-2.0
"""Who may read ``GET /metrics`` (issue 31): under keystone a system reader
(``baremetal:metrics:get``) or a client from ``[metrics]
allowed_scrapers``; under http_basic a user or such a client; under noauth
anyone. Keystone here is the real keystonemiddleware with its token fetch
replaced (tenancy.py); tests/functional/keystone/test_metrics.py does the
same against the real Keystone. Every persona's answer is also a row of
test_persona_matrix.py.
"""

import base64

import bcrypt
import pytest
from prometheus_client import parser

from ferrum.api import app as api_app
from ferrum.api import auth
from tests.functional.api import tenancy

SCRAPER = {'REMOTE_ADDR': '10.0.5.7'}
ELSEWHERE = {'REMOTE_ADDR': '10.0.6.7'}


def _parses(response):
    assert response.status_code == 200, response.get_data(as_text=True)
    names = {family.name for family in parser.text_string_to_metric_families(
        response.get_data(as_text=True))}
    assert 'ferrum_nodes' in names
    return names


@pytest.fixture
def scrapers(keystone_conf):
    keystone_conf.set_override('allowed_scrapers',
                               ['192.0.2.1', ' 10.0.5.0/24'], 'metrics')
    return keystone_conf


def test_keystone_a_system_reader_reads_a_project_reader_does_not(
        ks_client, tokens):
    _parses(ks_client.get('/metrics', headers=tenancy.headers(
        tokens, 'system_reader')))
    refused = ks_client.get('/metrics', headers=tenancy.headers(
        tokens, 'owner_admin'))
    assert refused.status_code == 403
    assert 'baremetal:metrics:get' in tenancy.fault(refused)
    anonymous = ks_client.get('/metrics')
    assert anonymous.status_code == 401
    assert anonymous.headers['WWW-Authenticate'].startswith('Keystone')
    # The refusals are requests too, counted around authentication.
    text = ks_client.get('/metrics', headers=tenancy.headers(
        tokens, 'system_reader')).get_data(as_text=True)
    counted = {(s.labels['route'], s.labels['status']): s.value
               for family in parser.text_string_to_metric_families(text)
               for s in family.samples
               if s.name == 'ferrum_api_requests_total'}
    assert counted[('/metrics', '401')] == 1
    assert counted[('/metrics', '403')] == 1


def test_keystone_an_allowed_scraper_needs_no_token(scrapers, db, conductor,
                                                    tokens):
    client = api_app.create_app(scrapers, db,
                                conductor.manager).test_client()
    _parses(client.get('/metrics', environ_base=SCRAPER))
    # Its own identity headers count for nothing, and do no harm.
    _parses(client.get('/metrics', environ_base=SCRAPER, headers={
        'X-Roles': 'admin', 'X-System-Scope': 'all',
        'X-Identity-Status': 'Confirmed'}))
    # An IPv4 client of a server listening on "::" reads as IPv6.
    _parses(client.get('/metrics', environ_base={
        'REMOTE_ADDR': '::ffff:10.0.5.8'}))
    assert client.get('/metrics', environ_base=ELSEWHERE).status_code == 401
    # The network lets it read the metrics, nothing else.
    assert client.get('/v1/nodes', environ_base=SCRAPER).status_code == 401
    # A token still works from anywhere.
    _parses(client.get('/metrics', environ_base=ELSEWHERE,
                       headers=tenancy.headers(tokens, 'system_reader')))


def test_a_bad_network_stops_the_app_naming_it(keystone_conf, db,
                                               conductor):
    keystone_conf.set_override('allowed_scrapers', ['10.0.5.0/33'],
                               'metrics')
    with pytest.raises(auth.ScrapersInvalid) as caught:
        api_app.create_app(keystone_conf, db, conductor.manager)
    assert "allowed_scrapers: '10.0.5.0/33' is not an address" in str(
        caught.value)


def test_http_basic_a_user_or_an_allowed_scraper(conf, db, conductor,
                                                  tmp_path):
    users = tmp_path / 'htpasswd'
    users.write_text('prom:%s\n' % bcrypt.hashpw(
        b'scrape-pass', bcrypt.gensalt(rounds=4)).decode())
    conf.set_override('auth_strategy', 'http_basic')
    conf.set_override('http_basic_auth_user_file', str(users))
    conf.set_override('allowed_scrapers', ['10.0.5.0/24'], 'metrics')
    client = api_app.create_app(conf, db, conductor.manager).test_client()
    assert client.get('/metrics', environ_base=ELSEWHERE).status_code == 401
    credentials = base64.b64encode(b'prom:scrape-pass').decode()
    _parses(client.get('/metrics', environ_base=ELSEWHERE, headers={
        'Authorization': 'Basic ' + credentials}))
    _parses(client.get('/metrics', environ_base=SCRAPER))
    assert client.get('/v1/nodes', environ_base=SCRAPER).status_code == 401


def test_noauth_anyone_reads(client):
    _parses(client.get('/metrics', environ_base=ELSEWHERE))
