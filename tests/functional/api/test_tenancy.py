# SPDX-License-Identifier: Apache-2.0
"""Tenancy beyond the persona matrix: identity headers, redaction, paging,
filters, allocations and leases of a project, policy files, Keystone away.
"""

import datetime
import os

import bcrypt
import pytest
from keystoneauth1 import loading as ks_loading

from ferrum.api import app as api_app
from ferrum.api import policy
from ferrum.leases import engine
from ferrum.objects import node as node_obj
from tests.functional.api import tenancy
from tests.functional.api.tenancy import fault
from tests.functional.api.tenancy import headers
from tests.functional.leases.sites import FAKE
from tests.functional.leases.sites import iso
from tests.polling import wait_for
from tests.process import free_port

SPOOFED = {'X-Roles': 'reader', 'X-Project-Id': tenancy.THIRD,
           'OpenStack-System-Scope': '', 'X-Identity-Status': 'Confirmed'}
ADMIN_SPOOF = {'X-Roles': 'admin,member,reader',
               'OpenStack-System-Scope': 'all',
               'X-Project-Id': tenancy.OWNER,
               'X-Identity-Status': 'Confirmed'}


def _node(db, name, **values):
    return node_obj.Node.create(db, dict(
        values, driver='fake-hardware', name=name))


def _policy_file(conf, tmp_path, text):
    """``[oslo_policy] policy_file`` with ``text``; its path."""
    path = tmp_path / 'policy.yaml'
    path.write_text(text)
    conf.set_override('policy_file', str(path), group='oslo_policy')
    return path


def _rewrite(path, text):
    """An edit of the policy file, its mtime a second later."""
    path.write_text(text)
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


def _client(conf, db, conductor):
    return api_app.create_app(conf, db, conductor.manager).test_client()


# ---- identity headers a client sends never count -------------------------

def test_noauth_caller_is_a_system_admin_whatever_headers_it_sends(
        client, db):
    _node(db, 'theirs', owner=tenancy.OTHER)
    response = client.get('/v1/nodes', headers=dict(tenancy.V, **SPOOFED))
    assert [n['name'] for n in response.get_json()['nodes']] == ['theirs']
    response = client.delete('/v1/nodes/theirs',
                             headers=dict(tenancy.V, **SPOOFED))
    assert response.status_code == 204


def test_http_basic_caller_is_a_system_admin_whatever_headers_it_sends(
        conf, db, conductor, tmp_path):
    users = tmp_path / 'htpasswd'
    users.write_text('ops:%s\n' % bcrypt.hashpw(
        b'pw', bcrypt.gensalt(4)).decode())
    conf.set_override('auth_strategy', 'http_basic')
    conf.set_override('http_basic_auth_user_file', str(users))
    basic = _client(conf, db, conductor)
    _node(db, 'theirs', owner=tenancy.OTHER)
    response = basic.get('/v1/nodes/theirs', headers=dict(
        tenancy.V, Authorization='Basic b3BzOnB3', **SPOOFED))
    assert response.status_code == 200
    assert response.get_json()['last_error'] is None


def test_keystone_ignores_identity_headers_the_client_sends(
        ks_client, tokens, db):
    _node(db, 'theirs', owner=tenancy.OTHER, last_error='boom')
    # A third party's token claiming system admin: still the third party.
    response = ks_client.get('/v1/nodes/theirs', headers=headers(
        tokens, 'third_party', **ADMIN_SPOOF))
    assert response.status_code == 404
    assert ks_client.get('/v1/nodes', headers=headers(
        tokens, 'third_party', **ADMIN_SPOOF)).get_json()['nodes'] == []
    # No token: 401, whatever the headers claim.
    response = ks_client.get('/v1/nodes', headers=headers(
        tokens, None, **ADMIN_SPOOF))
    assert response.status_code == 401


def test_public_routes_never_take_identity_headers(ks_client, db):
    # auth_token does not see /v1/lookup: its headers are the client's.
    _node(db, 'n', owner=tenancy.OWNER)
    response = ks_client.get('/v1/lookup?addresses=52:54:00:00:00:01',
                             headers=dict(tenancy.V, **ADMIN_SPOOF))
    assert response.status_code == 404


# ---- redaction -------------------------------------------------------------

def test_lessee_sees_ironic_redaction_strings_owner_and_system_the_values(
        ks_client, tokens, db):
    _node(db, 'n', owner=tenancy.OWNER, lessee=tenancy.LESSEE,
          last_error='bmc-7.example.net: timeout', reservation='cond-1',
          driver_info={'ipmi_address': 'bmc-7', 'ipmi_password': 'pw'},
          driver_internal_info={'agent_url': 'http://10.0.0.7'})
    lessee = ks_client.get('/v1/nodes/n', headers=headers(
        tokens, 'lessee_member')).get_json()
    assert lessee['last_error'] == ('** Value Redacted - Requires '
                                    'baremetal:node:get:last_error '
                                    'permission. **')
    assert lessee['reservation'] == ('** Redacted - requires baremetal:node:'
                                     'get:reservation permission. **')
    assert lessee['driver_info'] == {'content': (
        '** Redacted - requires baremetal:node:get:driver_info '
        'permission. **')}
    assert lessee['driver_internal_info'] == {'content': (
        '** Redacted - Requires baremetal:node:get:driver_internal_info '
        'permission. **')}
    states = ks_client.get('/v1/nodes/n/states', headers=headers(
        tokens, 'lessee_member')).get_json()
    assert states['last_error'] == lessee['last_error']
    listed = ks_client.get('/v1/nodes?fields=name,last_error',
                           headers=headers(tokens, 'lessee_reader'))
    assert listed.get_json()['nodes'][0]['last_error'] == (
        lessee['last_error'])
    for persona in ('owner_reader', 'system_reader', 'system_admin'):
        seen = ks_client.get('/v1/nodes/n', headers=headers(
            tokens, persona)).get_json()
        assert seen['last_error'] == 'bmc-7.example.net: timeout', persona
        assert seen['reservation'] == 'cond-1'
        assert seen['driver_internal_info'] == {
            'agent_url': 'http://10.0.0.7'}
        # Passwords stay masked for everyone.
        assert seen['driver_info'] == {'ipmi_address': 'bmc-7',
                                       'ipmi_password': '******'}


def test_a_patch_test_operation_learns_nothing_of_a_redacted_field(
        ks_client, tokens, db):
    _node(db, 'n', owner=tenancy.OWNER, lessee=tenancy.LESSEE,
          driver_info={'ipmi_address': 'bmc-7'})
    response = ks_client.patch('/v1/nodes/n', headers=headers(
        tokens, 'lessee_member'), json=[
            {'op': 'test', 'path': '/driver_info/ipmi_address',
             'value': 'bmc-7'},
            {'op': 'add', 'path': '/extra/x', 'value': 1}])
    assert response.status_code == 400
    response = ks_client.patch('/v1/nodes/n', headers=headers(
        tokens, 'lessee_member'), json=[
            {'op': 'add', 'path': '/driver_info/ipmi_address',
             'value': 'bmc-8'}])
    assert response.status_code == 403
    assert 'baremetal:node:update:driver_info' in fault(response)


def test_only_a_system_admin_turns_cleaning_off(ks_client, tokens, db):
    """A lessee (or an owner) that could set automated_clean = false would
    leave its data on the disks for the node's next tenant."""
    _node(db, 'n', owner=tenancy.OWNER, lessee=tenancy.LESSEE)
    off = [{'op': 'replace', 'path': '/automated_clean', 'value': False}]
    for persona in ('lessee_member', 'lessee_admin', 'owner_admin',
                    'system_member'):
        response = ks_client.patch('/v1/nodes/n', json=off,
                                   headers=headers(tokens, persona))
        assert response.status_code == 403, persona
        assert 'baremetal:node:disable_cleaning' in fault(response)
    assert node_obj.Node.get(db, 'n').automated_clean is not False
    on = [{'op': 'replace', 'path': '/automated_clean', 'value': True}]
    response = ks_client.patch('/v1/nodes/n', json=on, headers=headers(
        tokens, 'lessee_member'))
    assert response.status_code == 200
    response = ks_client.patch('/v1/nodes/n', json=off, headers=headers(
        tokens, 'system_admin'))
    assert response.status_code == 200
    assert node_obj.Node.get(db, 'n').automated_clean is False


# ---- lists: filters, fields, paging ----------------------------------------

def test_owner_filter_naming_another_project_is_refused(
        ks_client, tokens, db):
    _node(db, 'mine', owner=tenancy.OWNER)
    _node(db, 'theirs', owner=tenancy.OTHER)
    response = ks_client.get('/v1/nodes?owner=%s' % tenancy.OTHER,
                             headers=headers(tokens, 'owner_member'))
    assert response.status_code == 403
    response = ks_client.get('/v1/nodes?owner=%s' % tenancy.OWNER,
                             headers=headers(tokens, 'owner_member'))
    assert [n['name'] for n in response.get_json()['nodes']] == ['mine']
    response = ks_client.get('/v1/nodes?owner=%s' % tenancy.OTHER,
                             headers=headers(tokens, 'system_reader'))
    assert [n['name'] for n in response.get_json()['nodes']] == ['theirs']
    _node(db, 'leased', lessee=tenancy.OTHER)
    response = ks_client.get('/v1/nodes?project=%s' % tenancy.OTHER,
                             headers=headers(tokens, 'system_reader'))
    assert sorted(n['name'] for n in response.get_json()['nodes']) == [
        'leased', 'theirs']
    response = ks_client.get('/v1/nodes?project=%s' % tenancy.OWNER,
                             headers=headers(tokens, 'owner_reader'))
    assert [n['name'] for n in response.get_json()['nodes']] == ['mine']
    for path in ('/v1/allocations?owner=%s', '/v1/leases?project=%s',
                 '/v1/nodes?project=%s'):
        response = ks_client.get(path % tenancy.OTHER,
                                 headers=headers(tokens, 'owner_member'))
        assert response.status_code == 403, path


def test_next_links_and_markers_never_leak_another_projects_rows(
        ks_client, tokens, db):
    mine = [_node(db, 'mine-%d' % i, lessee=tenancy.LESSEE)
            for i in range(3)]
    theirs = [_node(db, 'theirs-%d' % i, owner=tenancy.OTHER)
              for i in range(3)]
    seen, url = [], '/v1/nodes?limit=1&fields=name,owner'
    while url:
        page = ks_client.get(url, headers=headers(
            tokens, 'lessee_reader')).get_json()
        seen += [n['name'] for n in page['nodes']]
        url = page.get('next', '').replace('http://localhost', '')
    assert seen == [n.name for n in mine]
    # A marker naming a hidden node is the 404 of a missing one.
    response = ks_client.get('/v1/nodes?marker=%s' % theirs[0].uuid,
                             headers=headers(tokens, 'lessee_reader'))
    assert response.status_code == 404
    assert fault(response) == 'Node %s could not be found.' % theirs[0].uuid
    # A hidden node named in a filter is an unknown one.
    response = ks_client.get('/v1/allocations?node=theirs-0',
                             headers=headers(tokens, 'lessee_reader'))
    assert response.status_code == 400
    assert 'could not be found' in fault(response)


# ---- allocations of a project ----------------------------------------------

def test_a_project_members_allocation_is_its_projects_on_its_nodes(
        ks_client, tokens, db):
    _node(db, 'theirs', owner=tenancy.OTHER, resource_class='gold',
          provision_state='available', power_state='power off')
    leased = _node(db, 'leased', lessee=tenancy.LESSEE,
                   resource_class='gold', provision_state='available',
                   power_state='power off')
    response = ks_client.post('/v1/allocations', headers=headers(
        tokens, 'lessee_member'), json={'resource_class': 'gold'})
    assert response.status_code == 201
    allocation = response.get_json()
    assert allocation['owner'] == tenancy.LESSEE
    done = tenancy.wait_allocated(ks_client, tokens, allocation['uuid'])
    assert done['node_uuid'] == leased.uuid
    response = ks_client.post('/v1/allocations', headers=headers(
        tokens, 'lessee_member'), json={'resource_class': 'gold',
                                        'owner': tenancy.OTHER})
    assert response.status_code == 403
    assert 'baremetal:allocation:create_restricted' in fault(response)
    response = ks_client.post('/v1/allocations', headers=headers(
        tokens, 'system_member'), json={'resource_class': 'gold',
                                        'owner': tenancy.OTHER})
    assert response.status_code == 201


# ---- leases of a project ---------------------------------------------------

def _lease(client, tokens, persona, **body):
    body.setdefault('start', '2099-01-01T00:00:00')
    body.setdefault('end', '2099-01-02T00:00:00')
    return client.post('/v1/leases', headers=headers(tokens, persona),
                       json=body)


def test_a_project_books_for_itself_from_its_nodes_and_the_shared_pool(
        ks_client, tokens, db):
    _node(db, 'theirs', owner=tenancy.OTHER, resource_class='gold')
    mine = _node(db, 'mine', owner=tenancy.OWNER, resource_class='gold')
    free = _node(db, 'free', resource_class='gold')
    response = _lease(ks_client, tokens, 'owner_member',
                      project=tenancy.OTHER, resource_class='gold')
    assert response.status_code == 403
    response = _lease(ks_client, tokens, 'owner_member',
                      project=tenancy.OWNER, resource_class='gold',
                      owner=tenancy.OTHER)
    assert response.status_code == 403
    response = _lease(ks_client, tokens, 'owner_member',
                      project=tenancy.OWNER, resource_class='gold', count=3)
    assert response.status_code == 409
    assert '2 found' in fault(response)
    assert 'of them 1 with another owner' in fault(response)
    response = _lease(ks_client, tokens, 'owner_member',
                      project=tenancy.OWNER, resource_class='gold', count=2)
    assert response.status_code == 201
    lease = response.get_json()
    assert sorted(lease['nodes']) == sorted([mine.uuid, free.uuid])
    assert lease['owner'] == tenancy.OWNER
    # A system member books for any project, from any node.
    response = _lease(ks_client, tokens, 'system_member',
                      project=tenancy.THIRD, resource_class='gold')
    assert response.status_code == 201
    assert response.get_json()['nodes'] == [
        node_obj.Node.get(db, 'theirs').uuid]
    # Each project sees its own leases only; the third party none.
    listed = ks_client.get('/v1/leases', headers=headers(
        tokens, 'owner_reader')).get_json()['leases']
    assert [item['uuid'] for item in listed] == [lease['uuid']]
    response = ks_client.delete('/v1/leases/%s' % lease['uuid'],
                                headers=headers(tokens, 'third_party'))
    assert response.status_code == 404
    response = ks_client.delete('/v1/leases/%s' % lease['uuid'],
                                headers=headers(tokens, 'owner_member'))
    assert response.status_code == 204


def test_policy_can_take_the_shared_pool_from_projects(
        keystone_conf, db, conductor, tokens, tmp_path):
    _policy_file(keystone_conf, tmp_path,
                 '"baremetal:lease:create:shared_pool": "!"\n')
    client = _client(keystone_conf, db, conductor)
    _node(db, 'free', resource_class='gold')
    response = _lease(client, tokens, 'owner_member',
                      project=tenancy.OWNER, resource_class='gold')
    assert response.status_code == 409
    assert '0 found' in fault(response)
    mine = _node(db, 'mine', owner=tenancy.OWNER, resource_class='gold')
    response = _lease(client, tokens, 'owner_member',
                      project=tenancy.OWNER, resource_class='gold')
    assert response.get_json()['nodes'] == [mine.uuid]


def test_calendar_hides_other_projects_leases(ks_client, tokens, db):
    node = _node(db, 'n', owner=tenancy.OWNER, lessee=tenancy.LESSEE)
    tenancy.book(ks_client, tokens, tenancy.OTHER, node.uuid, 'theirs')
    calendar = ks_client.get('/v1/nodes/n/leases',
                             headers=headers(tokens, 'owner_reader'))
    assert calendar.status_code == 200
    [entry] = calendar.get_json()['leases']
    assert (entry['uuid'], entry['name'], entry['project']) == (
        None, None, None)
    calendar = ks_client.get('/v1/nodes/n/leases',
                             headers=headers(tokens, 'system_reader'))
    assert calendar.get_json()['leases'][0]['name'] == 'theirs'


# ---- the policy file -------------------------------------------------------

def test_policy_file_overrides_and_is_reread_on_change(
        keystone_conf, db, conductor, tokens, tmp_path):
    path = _policy_file(keystone_conf, tmp_path,
                        '"baremetal:node:get": "role:admin"\n')
    client = _client(keystone_conf, db, conductor)
    _node(db, 'n', owner=tenancy.OWNER)
    assert client.get('/v1/nodes/n', headers=headers(
        tokens, 'owner_reader')).status_code == 404
    assert client.get('/v1/nodes/n', headers=headers(
        tokens, 'owner_admin')).status_code == 200
    _rewrite(path, '"baremetal:node:get": "role:reader"\n')
    # The file is checked once a second at most.
    wait_for(lambda: client.get('/v1/nodes/n', headers=headers(
        tokens, 'owner_reader')).status_code == 200,
             interval=0.05, what='the changed policy file in force')


def test_the_service_role_is_elevated_only_when_configured(
        keystone_conf, db, conductor, tokens):
    """Ironic's default (``rbac_service_role_elevated_access`` off): the
    service persona sees and books nothing outside its own project; with
    the option, its ``service_role`` makes it a system member."""
    _node(db, 'n', owner=tenancy.OWNER)
    service = headers(tokens, 'service')
    client = _client(keystone_conf, db, conductor)
    assert client.get('/v1/nodes', headers=service).get_json() == {
        'nodes': []}
    assert client.get('/v1/nodes/n', headers=service).status_code == 404
    assert client.get('/v1/conductors', headers=service).status_code == 403
    keystone_conf.set_override('rbac_service_role_elevated_access', True)
    client = _client(keystone_conf, db, conductor)
    assert client.get('/v1/nodes/n', headers=service).status_code == 200
    assert client.get('/v1/conductors', headers=service).status_code == 200
    assert client.patch('/v1/nodes/n', headers=service, json=[
        {'op': 'add', 'path': '/extra/by', 'value': 'nova'}]
    ).status_code == 200


@pytest.mark.parametrize('text, reason', [
    ('"baremetal:node:get": [unclosed\n', 'while parsing'),
    ('- a list\n', 'it is not a YAML mapping of rule names to check '
                  'strings'),
    ('"baremetal:node:get": 5\n', 'it is not a YAML mapping'),
    ('"baremetal:node:get": "role:admin and ("\n',
     'the rule "baremetal:node:get" has a check string that does not '
     'parse'),
])
def test_a_policy_file_that_does_not_parse_stops_start_up(
        keystone_conf, db, conductor, tmp_path, text, reason):
    path = _policy_file(keystone_conf, tmp_path, text)
    with pytest.raises(policy.PolicyFileInvalid) as raised:
        api_app.create_app(keystone_conf, db, conductor.manager)
    message = str(raised.value)
    assert '\n' not in message
    assert message.startswith('Cannot use the policy file %s (set by '
                              '[oslo_policy] policy_file): ' % path)
    assert reason in message


def test_a_policy_file_broken_later_answers_503_not_500(
        keystone_conf, db, conductor, tokens, tmp_path):
    path = _policy_file(keystone_conf, tmp_path,
                        '"baremetal:node:get": "role:reader"\n')
    client = _client(keystone_conf, db, conductor)
    _node(db, 'n', owner=tenancy.OWNER)
    _rewrite(path, '"baremetal:node:get": [unclosed\n')
    response = wait_for(lambda: _status(client.get('/v1/nodes/n', headers=(
        headers(tokens, 'owner_reader'))), 503), interval=0.05,
                        what='a 503')
    assert 'policy file is unusable' in fault(response)
    # Refused until the file is fixed, not served by the rules it had.
    for _ in range(3):
        assert client.get('/v1/nodes/n', headers=headers(
            tokens, 'owner_reader')).status_code == 503


def _status(response, status):
    """``response`` if it has ``status`` (for wait_for)."""
    return response if response.status_code == status else None


# ---- Keystone away ---------------------------------------------------------

def test_keystone_unreachable_is_503_never_500(keystone_conf, db,
                                               conductor):
    # A token the service never saw, and nothing listening where Keystone
    # should be: keystonemiddleware's own 503.
    group = 'keystone_authtoken'
    keystone_conf.register_opts(
        ks_loading.get_auth_plugin_conf_options('password'), group=group)
    for name, value in (('auth_type', 'password'),
                        ('auth_url', 'http://127.0.0.1:%d/v3' % free_port()),
                        ('username', 'ferrum'), ('password', 'pw'),
                        ('project_name', 'service'),
                        ('user_domain_name', 'Default'),
                        ('project_domain_name', 'Default'),
                        ('http_request_max_retries', 0)):
        keystone_conf.set_override(name, value, group=group)
    client = _client(keystone_conf, db, conductor)
    response = client.get('/v1/nodes', headers=dict(
        tenancy.V, **{'X-Auth-Token': 'never-seen'}))
    assert response.status_code == 503
    assert client.get('/v1', headers=tenancy.V).status_code == 200


# ---- a lease gives its project the lessee's rights, for its time ---------

def _leased_to_the_lessee(client, tokens, conductor):
    """Node ``n`` leased to the lessee project by a system member, from
    now; the lease started. Its uuid."""
    response = client.post('/v1/leases', headers=headers(
        tokens, 'system_member'), json={
            'project': tenancy.LESSEE, 'candidate_nodes': ['n'],
            'end': iso(conductor.ctx.clock() + datetime.timedelta(hours=1))})
    assert response.status_code == 201
    engine.run(conductor.ctx)
    return response.get_json()['uuid']


def test_a_lease_gives_its_project_lessee_rights_until_its_end(
        keystone_conf, db, conductor, ks_client, tokens):
    keystone_conf.set_override('guard_time', 0, 'lease')
    keystone_conf.set_override('cleaning_margin', 0, 'lease')
    node = node_obj.Node.create(db, dict(
        FAKE, name='n', owner=tenancy.OWNER,
        driver_info={'ipmi_address': 'bmc-1'}))
    as_lessee = headers(tokens, 'lessee_member')
    assert ks_client.get('/v1/nodes/n', headers=as_lessee).status_code == 404
    lease = _leased_to_the_lessee(ks_client, tokens, conductor)
    assert node_obj.Node.get(db, node.id).lessee == tenancy.LESSEE
    assert ks_client.get('/v1/nodes/n', headers=as_lessee).status_code == 200
    assert ks_client.put('/v1/nodes/n/states/power', headers=as_lessee,
                         json={'target': 'power on'}).status_code == 202
    assert ks_client.patch('/v1/nodes/n', headers=as_lessee, json=[
        {'op': 'add', 'path': '/driver_info/x', 'value': 1}]
    ).status_code == 403
    assert [n['name'] for n in ks_client.get(
        '/v1/nodes', headers=as_lessee).get_json()['nodes']] == ['n']
    assert ks_client.get('/v1/nodes/n', headers=headers(
        tokens, 'third_party')).status_code == 404
    assert ks_client.delete('/v1/leases/%s' % lease,
                            headers=as_lessee).status_code == 204

    def ended():
        engine.run(conductor.ctx)
        return node_obj.Node.get(db, node.id).lessee is None
    wait_for(ended, what='the lease to end')
    assert ks_client.get('/v1/nodes/n', headers=as_lessee).status_code == 404


def test_a_lessee_that_holds_its_node_back_loses_its_rights_at_the_end(
        keystone_conf, db, conductor, ks_client, tokens):
    """Maintenance set by the lessee keeps the node from coming back, and
    the lease waits in ``ending``; the lessee's rights are gone at once,
    not when the node is back."""
    keystone_conf.set_override('guard_time', 0, 'lease')
    keystone_conf.set_override('cleaning_margin', 0, 'lease')
    node = node_obj.Node.create(db, dict(FAKE, name='n', owner=tenancy.OWNER))
    lessee = headers(tokens, 'lessee_admin')
    lease = _leased_to_the_lessee(ks_client, tokens, conductor)
    assert ks_client.put('/v1/nodes/n/maintenance', headers=lessee,
                         json={'reason': 'mine'}).status_code == 202
    assert ks_client.delete('/v1/leases/%s' % lease,
                            headers=lessee).status_code == 204
    engine.run(conductor.ctx)
    shown = ks_client.get('/v1/leases/%s' % lease, headers=headers(
        tokens, 'system_reader')).get_json()
    assert shown['status'] == 'ending', shown
    assert 'in maintenance' in shown['last_error']
    assert ks_client.get('/v1/nodes/n', headers=lessee).status_code == 404
    assert ks_client.delete('/v1/nodes/n/maintenance',
                            headers=lessee).status_code == 404
    assert ks_client.get('/v1/nodes', headers=lessee).get_json()[
        'nodes'] == []
    # The owner brings it back; the lease ends.
    assert ks_client.delete('/v1/nodes/n/maintenance', headers=headers(
        tokens, 'owner_member')).status_code == 202

    def ended():
        engine.run(conductor.ctx)
        return ks_client.get('/v1/leases/%s' % lease, headers=headers(
            tokens, 'system_reader')).get_json()['status'] == 'ended'
    wait_for(ended, what='the lease to end')
    assert node_obj.Node.get(db, node.id).lessee is None


def test_a_hidden_candidate_node_is_an_unknown_one(ks_client, tokens, db):
    _node(db, 'theirs', owner=tenancy.OTHER, resource_class='gold')
    _node(db, 'leased', lessee=tenancy.LESSEE, resource_class='gold')
    missing = ks_client.post('/v1/allocations', headers=headers(
        tokens, 'lessee_member'), json={'resource_class': 'gold',
                                        'candidate_nodes': ['nowhere']})
    for path, body in (('/v1/allocations', {'resource_class': 'gold'}),
                       ('/v1/leases', {'project': tenancy.LESSEE,
                                       'end': '2099-01-02T00:00:00',
                                       'start': '2099-01-01T00:00:00'})):
        response = ks_client.post(path, headers=headers(
            tokens, 'lessee_member'), json=dict(
                body, candidate_nodes=['leased', 'theirs']))
        assert response.status_code == 400, path
        assert fault(response) == fault(missing).replace('nowhere', 'theirs')
        response = ks_client.post(path, headers=headers(
            tokens, 'lessee_member'), json=dict(
                body, candidate_nodes=['leased']))
        assert response.status_code == 201, response.get_data(as_text=True)
