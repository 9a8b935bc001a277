# SPDX-License-Identifier: Apache-2.0
"""/v1/deploy_templates (API 1.55+)."""

import pytest

from ferrum.objects import deploy_template as template_obj
from tests.functional.api.nodes import fault

V = {'X-OpenStack-Ironic-API-Version': '1.55'}
URL = '/v1/deploy_templates'
BIOS = {'interface': 'bios', 'step': 'apply_configuration',
        'args': {'settings': [{'name': 'LogicalProc', 'value': 'Enabled'}]},
        'priority': 150}


def _create(client, name='CUSTOM_HT_ON', steps=(BIOS,), **values):
    response = client.post(URL, headers=V, json=dict(
        values, name=name, steps=list(steps)))
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


# ---- the resource ----------------------------------------------------------

def test_below_1_55_reads_are_404_and_writes_405(client):
    old = {'X-OpenStack-Ironic-API-Version': '1.54'}
    response = client.get(URL, headers=old)
    assert response.status_code == 404
    assert '1.55' in fault(response)
    response = client.post(URL, headers=old, json={
        'name': 'CUSTOM_A', 'steps': [BIOS]})
    assert response.status_code == 405
    assert '1.55' in fault(response)
    assert client.get(URL, headers=V).get_json() == {'deploy_templates': []}


def test_create_get_by_uuid_and_name_list_delete(client):
    created = _create(client, extra={'a': 1})
    assert set(created) == {'uuid', 'name', 'steps', 'extra', 'created_at',
                            'updated_at', 'links'}
    assert created['steps'] == [BIOS]
    assert created['updated_at'] is None
    for ident in (created['uuid'], 'CUSTOM_HT_ON'):
        shown = client.get('%s/%s' % (URL, ident), headers=V).get_json()
        assert shown == created
    [listed] = client.get(URL, headers=V).get_json()['deploy_templates']
    assert set(listed) == {'uuid', 'name', 'links'}
    [detailed] = client.get(URL + '?detail=true', headers=V).get_json()[
        'deploy_templates']
    assert detailed == created
    [some] = client.get(URL + '?fields=uuid,steps', headers=V).get_json()[
        'deploy_templates']
    # Ironic keeps links whatever fields asks for.
    assert set(some) == {'uuid', 'steps', 'links'}
    assert client.delete('%s/CUSTOM_HT_ON' % URL,
                         headers=V).status_code == 204
    response = client.get('%s/%s' % (URL, created['uuid']), headers=V)
    assert response.status_code == 404
    assert fault(response) == ('Deploy template %s could not be found.'
                               % created['uuid'])


def test_a_given_uuid_and_a_priority_as_digits(client):
    uuid = '8D1E7C57-2B2E-4E43-9F3E-32F4A6D1D2C0'
    created = _create(client, uuid=uuid, steps=[dict(BIOS, priority='10')])
    assert created['uuid'] == uuid.lower()
    assert created['steps'][0]['priority'] == 10


def test_duplicates_are_409(client):
    first = _create(client)
    response = client.post(URL, headers=V, json={
        'name': 'CUSTOM_HT_ON', 'steps': [BIOS]})
    assert response.status_code == 409
    assert fault(response) == ('A deploy template with name CUSTOM_HT_ON '
                               'already exists.')
    response = client.post(URL, headers=V, json={
        'name': 'CUSTOM_OTHER', 'steps': [BIOS], 'uuid': first['uuid']})
    assert response.status_code == 409
    assert fault(response) == ('A deploy template with UUID %s already '
                               'exists.' % first['uuid'])


@pytest.mark.parametrize('body, words', [
    ({'name': 'HT_ON', 'steps': [BIOS]}, 'Invalid trait "HT_ON"'),
    ({'name': 'CUSTOM_lower', 'steps': [BIOS]}, 'Invalid trait'),
    ({'name': 'CUSTOM_A', 'steps': []}, 'steps'),
    ({'name': 'CUSTOM_A'}, "'steps' is a required property"),
    ({'steps': [BIOS]}, "'name' is a required property"),
    ({'name': 'CUSTOM_A', 'steps': [dict(BIOS, interface='boot')]},
     "'boot' is not one of"),
    ({'name': 'CUSTOM_A', 'steps': [dict(BIOS, priority=-1)]}, 'priority'),
    ({'name': 'CUSTOM_A', 'steps': [dict(BIOS, priority='x')]}, 'priority'),
    ({'name': 'CUSTOM_A', 'steps': [dict(BIOS, args=[])]}, 'args'),
    ({'name': 'CUSTOM_A', 'steps': [
        {k: v for k, v in BIOS.items() if k != 'args'}]},
     "'args' is a required property"),
    ({'name': 'CUSTOM_A', 'steps': [dict(BIOS, extra=1)]}, 'extra'),
    ({'name': 'CUSTOM_A', 'steps': [BIOS, dict(BIOS, priority=1)]},
     'Deploy template invalid: Duplicate deploy steps. A template cannot '
     'have multiple deploy steps with the same interface and step. '
     'Duplicates: interface: bios, step: apply_configuration.'),
    ({'name': 'CUSTOM_A', 'steps': [BIOS], 'uuid': 'nope'},
     'uuid must be a UUID'),
    ({'name': 'CUSTOM_A', 'steps': [BIOS], 'owner': 'x'}, 'owner'),
])
def test_bad_templates_are_400(client, body, words):
    response = client.post(URL, headers=V, json=body)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert words in fault(response)
    assert client.get(URL, headers=V).get_json() == {'deploy_templates': []}


def test_secret_arguments_are_masked(client, db):
    step = dict(BIOS, args={'password': 'hunter2', 'settings': []})
    created = _create(client, steps=[step])
    assert created['steps'][0]['args'] == {'password': '******',
                                           'settings': []}
    shown = client.get('%s/%s' % (URL, created['uuid']), headers=V)
    assert 'hunter2' not in shown.get_data(as_text=True)
    # A PATCH of something else keeps the secret as it was stored.
    response = client.patch('%s/%s' % (URL, created['uuid']), headers=V,
                            json=[{'op': 'add', 'path': '/extra/a',
                                   'value': 1}])
    assert response.status_code == 200
    stored = template_obj.DeployTemplate.get(db, created['uuid'])
    assert stored.steps[0]['args']['password'] == 'hunter2'


def test_patch(client):
    created = _create(client)
    url = '%s/%s' % (URL, created['uuid'])
    response = client.patch(url, headers=V, json=[
        {'op': 'add', 'path': '/extra/answer', 'value': 42},
        {'op': 'replace', 'path': '/name', 'value': 'CUSTOM_HT_OFF'},
        {'op': 'replace', 'path': '/steps/0/priority', 'value': '20'}])
    assert response.status_code == 200, response.get_data(as_text=True)
    patched = response.get_json()
    assert (patched['extra'], patched['name'],
            patched['steps'][0]['priority']) == ({'answer': 42},
                                                 'CUSTOM_HT_OFF', 20)
    assert patched['updated_at'] is not None
    assert client.get(url, headers=V).get_json() == patched
    response = client.patch(url, headers=V, json=[
        {'op': 'remove', 'path': '/extra'}])
    assert response.get_json()['extra'] == {}


@pytest.mark.parametrize('patch, code, words', [
    ([{'op': 'replace', 'path': '/uuid', 'value': 'x'}], 400,
     'Cannot patch /uuid. Only the following can be updated: extra, name, '
     'steps'),
    ([{'op': 'remove', 'path': '/name'}], 400, 'name'),
    ([{'op': 'replace', 'path': '/name', 'value': 'bad'}], 400,
     'Invalid trait'),
    ([{'op': 'replace', 'path': '/steps', 'value': []}], 400, 'steps'),
    ([{'op': 'add', 'path': '/steps/-', 'value': BIOS}], 400,
     'Duplicate deploy steps'),
    ([{'op': 'replace', 'path': '/steps/0/interface', 'value': 'boot'}],
     400, "'boot' is not one of"),
    ([{'op': 'replace', 'path': '/name', 'value': 'CUSTOM_TAKEN'}], 409,
     'A deploy template with name CUSTOM_TAKEN already exists.'),
])
def test_bad_patches(client, patch, code, words):
    _create(client, name='CUSTOM_TAKEN')
    created = _create(client)
    url = '%s/%s' % (URL, created['uuid'])
    response = client.patch(url, headers=V, json=patch)
    assert response.status_code == code, response.get_data(as_text=True)
    assert words in fault(response)
    assert client.get(url, headers=V).get_json() == created


def test_paging_and_sorting(client, conf):
    conf.set_override('max_limit', 2, group='api')
    names = ['CUSTOM_T%d' % i for i in range(5)]
    for name in reversed(names):
        _create(client, name=name)
    seen, url = [], URL + '?sort_key=name'
    while url:
        page = client.get(url, headers=V).get_json()
        seen += [t['name'] for t in page['deploy_templates']]
        url = page.get('next', '').replace('http://localhost', '')
        assert len(seen) <= 5
    assert seen == names
    for query, words in (('sort_key=steps', 'sort_key'),
                         ('sort_key=extra', 'sort_key'),
                         ('marker=CUSTOM_T1', 'marker'),
                         ('fields=owner', 'owner'),
                         ('fields=uuid&detail=true', 'fields or detail')):
        response = client.get(URL + '?' + query, headers=V)
        assert response.status_code == 400, query
        assert words in fault(response), query
