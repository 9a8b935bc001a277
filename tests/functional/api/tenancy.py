# SPDX-License-Identifier: Apache-2.0
"""Keystone personas for API tests: the real keystonemiddleware, whose
token fetch alone AuthTokenFixture replaces (header stripping and setting
run as in production), and one world of nodes, ports, allocations and
leases per persona.
"""

import datetime
import json
import uuid

import pytest
from keystoneauth1 import fixture as ks_fixture
from keystonemiddleware import fixture as km_fixture

from ferrum.api import app as api_app
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj
from ferrum.objects import portgroup as portgroup_obj
from ferrum.objects import trait as trait_obj

OWNER = 'a1' * 16
LESSEE = 'b2' * 16
OTHER = 'c3' * 16
THIRD = 'd4' * 16
#: The project of OpenStack's service users (nova, an inspector): Ironic's
#: service_role rule matches its name, "service".
SERVICE = 'e5' * 16
KEYSTONE_URI = 'http://keystone.test/identity/v3'
V = {'X-OpenStack-Ironic-API-Version': '1.65'}
ALL_ROLES = ('admin', 'manager', 'member', 'reader')

#: persona -> (project or None for system scope, roles), as Keystone's
#: implied roles expand them (admin > manager > member > reader).
PERSONAS = {
    'system_admin': (None, ALL_ROLES),
    'system_member': (None, ('member', 'reader')),
    'system_reader': (None, ('reader',)),
    'owner_admin': (OWNER, ALL_ROLES),
    'owner_member': (OWNER, ('member', 'reader')),
    'owner_reader': (OWNER, ('reader',)),
    'lessee_admin': (LESSEE, ALL_ROLES),
    'lessee_member': (LESSEE, ('member', 'reader')),
    'lessee_reader': (LESSEE, ('reader',)),
    'third_party': (THIRD, ALL_ROLES),
    # Keystone implies nothing from the service role.
    'service': (SERVICE, ('service',)),
}
#: Tokens auth_token refuses: one Keystone never issued, one expired.
BAD_TOKENS = {'invalid': 'token-nobody-issued', 'expired': 'token-expired'}


def project_name(project):
    return 'service' if project == SERVICE else 'p-' + project


def fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


@pytest.fixture
def tokens():
    """token id per persona, registered with the real auth_token, and
    the :data:`BAD_TOKENS`."""
    fixture = km_fixture.AuthTokenFixture()
    fixture.setUp()
    ids = dict(BAD_TOKENS)
    for name, (project, roles) in PERSONAS.items():
        token = ks_fixture.V3Token(user_id='user-' + name, user_name=name,
                                   project_id=project,
                                   project_name=project and project_name(
                                       project))
        if project is None:
            token.set_system_scope()
        for role in roles:
            token.add_role(name=role)
        ids[name] = 'token-' + name
        fixture.add_token(token, token_id=ids[name])
    now = datetime.datetime.now(datetime.UTC)
    expired = ks_fixture.V3Token(
        user_id='user-expired', project_id=OWNER,
        issued=now - datetime.timedelta(hours=1),
        expires=now - datetime.timedelta(minutes=5))
    expired.add_role(name='admin')
    fixture.add_token(expired, token_id=BAD_TOKENS['expired'])
    yield ids
    fixture.cleanUp()


@pytest.fixture
def keystone_conf(conf):
    conf.set_override('auth_strategy', 'keystone')
    conf.set_override('www_authenticate_uri', KEYSTONE_URI,
                      group='keystone_authtoken')
    return conf


@pytest.fixture
def ks_client(keystone_conf, db, conductor, tokens):
    return api_app.create_app(keystone_conf, db,
                              conductor.manager).test_client()


def headers(tokens, persona, **extra):
    found = dict(V, **extra)
    if persona is not None:
        found['X-Auth-Token'] = tokens[persona]
    return found


def mac(suffix):
    return '52:54:00:%02x:00:01' % (sum(suffix.encode()) % 256)


def build_world(db, manager, suffix, owner=OWNER, lessee=LESSEE):
    """For one persona: node n (owner and lessee, a trait, a port, a port
    group g), node m (active, an allocation of the lessee's, or the
    owner's without one); names end with ``suffix``."""
    n = node_obj.Node.create(db, {
        'driver': 'fake-hardware', 'name': 'n-' + suffix, 'owner': owner,
        'lessee': lessee, 'resource_class': 'gold',
        'driver_info': {'ipmi_password': 'secret', 'ipmi_address': 'bmc'},
        'last_error': 'bmc.example.net unreachable'})
    trait_obj.set_for_node(db, n.id, ['CUSTOM_X'])
    port = port_obj.Port.create(db, {'node_id': n.id,
                                     'address': mac(suffix)})
    group = portgroup_obj.Portgroup.create(db, {'node_id': n.id,
                                               'name': 'g-' + suffix})
    m = node_obj.Node.create(db, {
        'driver': 'fake-hardware', 'name': 'm-' + suffix, 'owner': owner,
        'lessee': lessee, 'resource_class': 'silver',
        'provision_state': 'active'})
    allocation = manager.backfill_allocation(
        m.id, {'owner': lessee or owner, 'name': 'a-' + suffix}, [])
    return {'n': n.uuid, 'm': m.uuid, 'p': port.uuid, 'g': group.uuid,
            'a': allocation.uuid, 'suffix': suffix}


def book(client, tokens, project, node, name):
    """A pending lease of ``project`` on ``node``, booked by the system
    admin; its uuid."""
    start = datetime.datetime.now(datetime.UTC).replace(
        tzinfo=None) + datetime.timedelta(days=2)
    response = client.post('/v1/leases', headers=headers(
        tokens, 'system_admin'), json={
            'name': name, 'project': project, 'candidate_nodes': [node],
            'start': start.isoformat(), 'end': (
                start + datetime.timedelta(hours=1)).isoformat()})
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()['uuid']


def new_uuid():
    return str(uuid.uuid4())


def wait_allocated(client, tokens, ident):
    """The allocation once it is no longer allocating."""
    from tests.polling import wait_for

    def done():
        found = client.get('/v1/allocations/%s' % ident, headers=headers(
            tokens, 'system_reader')).get_json()
        return found if found['state'] != 'allocating' else None
    return wait_for(done, what='allocation %s' % ident)
