# SPDX-License-Identifier: Apache-2.0
"""``GET /metrics`` under ``auth_strategy = keystone`` with the real
Keystone of tests/keystone.py and its real tokens (issue 31): a
system-scoped reader reads it, a project's admin is refused, a caller
without a token is sent to Keystone."""

from keystoneauth1 import loading as ks_loading
from prometheus_client import parser

from ferrum.api import app as api_app


def test_system_reader_reads_project_admin_does_not(keystone, conf, db,
                                                    conductor):
    conf.set_override('auth_strategy', 'keystone')
    conf.register_opts(ks_loading.get_auth_plugin_conf_options('password'),
                       group='keystone_authtoken')
    for name, value in keystone.authtoken_options().items():
        conf.set_override(name, value, group='keystone_authtoken')
    client = api_app.create_app(conf, db, conductor.manager).test_client()
    read = client.get('/metrics', headers={
        'X-Auth-Token': keystone.token('system-reader')})
    assert read.status_code == 200, read.get_data(as_text=True)
    names = {family.name for family in parser.text_string_to_metric_families(
        read.get_data(as_text=True))}
    assert {'ferrum_nodes', 'ferrum_conductors_live'} <= names
    refused = client.get('/metrics', headers={
        'X-Auth-Token': keystone.token('owner-admin')})
    assert refused.status_code == 403
    anonymous = client.get('/metrics')
    assert anonymous.status_code == 401
    assert anonymous.headers['WWW-Authenticate'] == (
        'Keystone uri="%s"' % keystone.url)
