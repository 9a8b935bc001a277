# SPDX-License-Identifier: Apache-2.0
"""/v1/deploy_templates (API 1.55+), and their steps run at a deploy."""

import pytest

from ferrum.conductor import deployments
from ferrum.conductor import task_manager
from ferrum.drivers.fake import interfaces as fake_interfaces
from ferrum.objects import deploy_template as template_obj
from ferrum.objects import node as node_obj
from tests.functional.api.nodes import fault
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state

V = {'X-OpenStack-Ironic-API-Version': '1.55'}
URL = '/v1/deploy_templates'
BIOS = {'interface': 'bios', 'step': 'apply_configuration',
        'args': {'settings': [{'name': 'LogicalProc', 'value': 'Enabled'}]},
        'priority': 150}
RECORD = 'record_deploy_message'


def _create(client, name='CUSTOM_HT_ON', steps=(BIOS,), **values):
    response = client.post(URL, headers=V, json=dict(
        values, name=name, steps=list(steps)))
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def _record(message, priority=150):
    return {'interface': 'deploy', 'step': RECORD,
            'args': {'message': message}, 'priority': priority}


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


# ---- at a deploy -----------------------------------------------------------

@pytest.fixture
def available(conductor, db):
    return to_state(conductor.manager, db, enroll(conductor.manager),
                    'available')


def _deploy(client, node, *traits):
    for trait in traits:
        assert client.put('/v1/nodes/%s/traits/%s' % (node.uuid, trait),
                          headers=V).status_code == 204
    response = client.patch('/v1/nodes/' + node.uuid, headers=V, json=[
        {'op': 'add', 'path': '/instance_info/traits',
         'value': list(traits)}])
    assert response.status_code == 200, response.get_data(as_text=True)
    return client.put('/v1/nodes/%s/states/provision' % node.uuid,
                      headers=V, json={'target': 'active'})


def _steps_started(client, node):
    history = client.get('/v1/nodes/%s/history?detail=true' % node.uuid,
                         headers={'X-OpenStack-Ironic-API-Version': '1.78'})
    return [entry['event'] for entry in history.get_json()['history']
            if entry['event'].startswith('Deploy step')]


def test_a_matching_template_runs_its_step_by_priority(client, db,
                                                       available):
    _create(client, name='CUSTOM_RECORD', steps=[_record('hello')])
    _create(client, name='CUSTOM_UNUSED', steps=[_record('not me')])
    assert _deploy(client, available, 'CUSTOM_RECORD').status_code == 202
    node = settled(db, available.id, 'active')
    assert node.driver_internal_info[fake_interfaces.DEPLOY_MESSAGE] == (
        'hello')
    started = _steps_started(client, node)
    # 150 before the deploy interface's deploy (100).
    assert started == ['Deploy step deploy.%s started' % RECORD,
                       'Deploy step deploy.deploy started']


def test_a_template_step_after_deploy(client, db,
                                                              available):
    _create(client, name='CUSTOM_RECORD', steps=[_record('late', 10)])
    assert _deploy(client, available, 'CUSTOM_RECORD').status_code == 202
    node = settled(db, available.id, 'active')
    started = _steps_started(client, node)
    assert started == ['Deploy step deploy.deploy started',
                       'Deploy step deploy.%s started' % RECORD]


def test_a_template_turns_a_driver_step_off(client, db, available):
    _create(client, name='CUSTOM_QUIET', steps=[
        {'interface': 'deploy', 'step': 'deploy', 'args': {},
         'priority': 0}, _record('only me')])
    assert _deploy(client, available, 'CUSTOM_QUIET').status_code == 202
    node = settled(db, available.id, 'active')
    started = _steps_started(client, node)
    assert started == ['Deploy step deploy.%s started' % RECORD]


@pytest.mark.parametrize('steps, words', [
    ([BIOS], 'node does not support the deploy step '
             'bios.apply_configuration'),
    ([dict(_record('x'), args={})], 'deploy step deploy.%s is missing these '
                                    'required arguments: message' % RECORD),
    ([dict(_record('x'), args={'message': 'x', 'loud': True})],
     'unexpected arguments: loud'),
    ([{'interface': 'deploy', 'step': 'deploy', 'args': {},
       'priority': 5}], 'deploy step deploy on interface deploy is a core '
                      'step'),
])
def test_a_step_the_driver_cannot_run_refuses_the_deploy(
        client, db, available, steps, words):
    _create(client, name='CUSTOM_BAD', steps=steps)
    response = _deploy(client, available, 'CUSTOM_BAD')
    assert response.status_code == 400, response.get_data(as_text=True)
    text = fault(response)
    assert ("Validation of deploy steps from deploy templates matching this "
            "node's instance traits failed. Matching deploy templates: "
            "CUSTOM_BAD. Errors: ") in text
    assert words in text
    node = node_obj.Node.get(db, available.id)
    assert node.provision_state == 'available'


def test_two_templates_with_one_step_refuse_the_deploy(client, db,
                                                       available):
    _create(client, name='CUSTOM_ONE', steps=[_record('one')])
    _create(client, name='CUSTOM_TWO', steps=[_record('two')])
    response = _deploy(client, available, 'CUSTOM_ONE', 'CUSTOM_TWO')
    assert response.status_code == 400
    assert ('Duplicate deploy steps for deploy.%s' % RECORD) in fault(
        response)


def test_instance_traits_must_be_the_nodes(client, db, available):
    response = client.patch('/v1/nodes/' + available.uuid, headers=V, json=[
        {'op': 'add', 'path': '/instance_info/traits',
         'value': ['CUSTOM_MISSING']}])
    assert response.status_code == 200
    response = client.put('/v1/nodes/%s/states/provision' % available.uuid,
                          headers=V, json={'target': 'active'})
    assert response.status_code == 400
    assert ('Cannot specify instance traits that are not also set on the '
            'node. Node %s is missing traits CUSTOM_MISSING'
            % available.uuid) in fault(response)


def test_a_template_changed_after_the_request_fails_the_deploy(
        client, db, conductor, available):
    """The steps are checked again when the deploy starts, in the worker
    (the request was checked against the templates of then): the deploy
    fails, with the reason as last_error."""
    assert client.put('/v1/nodes/%s/traits/CUSTOM_LATER' % available.uuid,
                      headers=V).status_code == 204
    node = node_obj.Node.get(db, available.id)
    node.instance_info = {'traits': ['CUSTOM_LATER']}
    node.save()
    # Made after the request was checked: what the deploy finds starting.
    _create(client, name='CUSTOM_LATER', steps=[BIOS])
    with task_manager.acquire(conductor.ctx, available.id, 'test') as task:
        task.process_event('deploy')
        deployments.do_deploy(task)
    node = node_obj.Node.get(db, available.id)
    assert node.provision_state == 'deploy failed'
    assert node.last_error.startswith(
        'Cannot get deploy steps; failed to deploy: Validation of deploy '
        'steps from deploy templates')
    assert 'bios.apply_configuration' in node.last_error
