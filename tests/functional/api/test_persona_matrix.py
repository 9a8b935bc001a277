# SPDX-License-Identifier: Apache-2.0
"""The persona matrix: every route and method, every persona, through the
real keystonemiddleware (see tests/functional/api/tenancy.py).

A table in data, in the style of Ironic's test_rbac_*.yaml: each row names
a request, the status it gets when allowed, and who is allowed. Everyone
else gets 404 when the resource is hidden from them (concealment: neither
owner nor lessee) and 403 when they can see it but not do this; without a
token, or with one Keystone did not issue or that expired, every
non-public route is 401, whether or not auth_token may defer its decision.
Lists also name exactly which rows each persona sees.

The service persona (the service role in the "service" project), with
``[DEFAULT] rbac_service_role_elevated_access`` set as Ironic's nova and
inspector deployments set it, passes Ironic's ``rule:service_role``
wherever its defaults use it: through SYSTEM_MEMBER and SYSTEM_READER it
acts as a system member, on every node, port, allocation and lease, but
not where a rule wants a system admin or a system-scoped token. (Without
the option it is a user of its own project: test_tenancy.py.)
"""

import pytest

from ferrum.api import app as api_app
from ferrum.api import routes
from ferrum.objects import chassis as chassis_obj
from ferrum.objects import deploy_template as template_obj
from ferrum.objects import node as node_obj
from ferrum.objects import volume_connector as connector_obj
from ferrum.objects import volume_target as target_obj
from tests.functional.api import tenancy

SYSTEM_ADMIN = {'system_admin'}
#: Ironic's SYSTEM_MEMBER and SYSTEM_READER include rule:service_role.
SYSTEM_MEMBER = SYSTEM_ADMIN | {'system_member', 'service'}
SYSTEM_READER = SYSTEM_MEMBER | {'system_reader'}
#: Rules declaring scope_types ['system'] refuse every project-scoped
#: token, the service's too.
SYSTEM_SCOPE_READER = SYSTEM_READER - {'service'}
OWNER = {'owner_admin', 'owner_member', 'owner_reader'}
LESSEE = {'lessee_admin', 'lessee_member', 'lessee_reader'}
#: Who sees node n and m (system readers, owner and lessee readers).
NODE_READERS = SYSTEM_READER | OWNER | LESSEE
PROJECT_MEMBER = SYSTEM_MEMBER | {'owner_admin', 'owner_member',
                                  'lessee_admin', 'lessee_member'}
OWNER_MEMBER_LESSEE_ADMIN = SYSTEM_MEMBER | {'owner_admin', 'owner_member',
                                             'lessee_admin'}
OWNER_MEMBER = SYSTEM_MEMBER | {'owner_admin', 'owner_member'}
OWNER_ADMIN = SYSTEM_MEMBER | {'owner_admin'}
SYSTEM_OR_OWNER_ADMIN = SYSTEM_ADMIN | {'owner_admin'}
#: Any admin, and the service: baremetal:node:create:self_owned_node.
SELF_SERVICE = SYSTEM_ADMIN | {'owner_admin', 'lessee_admin', 'third_party',
                               'service'}
#: The lessee's allocation a and lease l.
LESSEE_READERS = SYSTEM_READER | LESSEE
LESSEE_MEMBERS = SYSTEM_MEMBER | {'lessee_admin', 'lessee_member'}
#: Ironic's SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN (volume create, delete).
OWNER_LESSEE_ADMIN = SYSTEM_MEMBER | {'owner_admin', 'lessee_admin'}
#: Chassis rules are system scope: the service's project token fails.
SYSTEM_SCOPE_MEMBER = SYSTEM_MEMBER - {'service'}
EVERYONE = set(tenancy.PERSONAS)
NODE = '/v1/nodes/{n}'
TEMPLATE_STEP = {'interface': 'bios', 'step': 'apply_configuration',
                 'args': {}, 'priority': 10}


def row(method, path, ok, allowed, visible=NODE_READERS, body=None,
        route=None, rows=None, hidden=404, version=None, answers=None):
    """One request. ``visible``: who may see the resource (the others get
    ``hidden``: 404, or 400 where the resource is named in the body);
    ``rows``: for lists, persona -> the set of names it sees; ``version``:
    the microversion, when not tenancy.V's; ``answers``: persona -> its
    status where none of these rules gives it."""
    return {'method': method, 'path': path, 'ok': ok, 'allowed': allowed,
            'visible': visible, 'body': body, 'rows': rows, 'hidden': hidden,
            'route': route or path.split('?')[0], 'version': version,
            'answers': answers or {}}


def _lists(kind, owner_sees=True, lessee_sees=True):
    """Rows per persona: system readers all of ``kind`` (another
    project's too), owner and lessee personas their projects' (or none),
    the third party none."""
    found = {p: kind + '_all' for p in SYSTEM_READER}
    found.update({p: kind if owner_sees else 'none' for p in OWNER})
    found.update({p: kind if lessee_sees else 'none' for p in LESSEE})
    found['third_party'] = 'none'
    return found


MATRIX = [
    # ---- public ----
    row('GET', '/', 200, EVERYONE, EVERYONE),
    row('GET', '/v1', 200, EVERYONE, EVERYONE),
    row('GET', '/v1/lookup?addresses=52:54:00:00:00:99', 404, EVERYONE,
        EVERYONE, route='/v1/lookup'),
    row('POST', '/v1/heartbeat/{n}', 404, EVERYONE, EVERYONE,
        body={'callback_url': 'http://192.0.2.1:9999'},
        route='/v1/heartbeat/<node_ident>'),
    row('POST', '/v1/continue_inspection', 404, EVERYONE, EVERYONE,
        body={'inventory': {'interfaces': []}}, version='1.87'),
    # ---- nodes ----
    row('GET', '/v1/nodes', 200, EVERYONE, EVERYONE,
        rows=_lists('nodes')),
    row('GET', '/v1/nodes/detail', 200, EVERYONE, EVERYONE,
        rows=_lists('nodes')),
    # Self-service nodes (Ironic's create:self_owned_node, "role:admin or
    # role:service"): a project admin's node is its project's.
    row('POST', '/v1/nodes', 201, SELF_SERVICE, EVERYONE,
        body={'driver': 'fake-hardware'}),
    # ... and naming another project as its owner is Ironic's 400.
    row('POST', '/v1/nodes#owner', 201, SYSTEM_ADMIN, EVERYONE,
        body={'driver': 'fake-hardware', 'owner': tenancy.OTHER},
        route='/v1/nodes',
        answers=dict.fromkeys(SELF_SERVICE - SYSTEM_ADMIN, 400)),
    row('GET', NODE, 200, NODE_READERS),
    row('PATCH', NODE, 200, PROJECT_MEMBER,
        body=[{'op': 'add', 'path': '/extra/x', 'value': 1}]),
    row('PATCH', NODE + '#driver_info', 200, OWNER_MEMBER,
        body=[{'op': 'add', 'path': '/driver_info/x', 'value': 1}],
        route=NODE),
    # Each path's rule is checked before the patch is applied: a field
    # redacted for the lessee is a 403, not a failed patch (400).
    row('PATCH', NODE + '#driver_info_key', 200, OWNER_MEMBER,
        body=[{'op': 'replace', 'path': '/driver_info/ipmi_address',
               'value': 'bmc-2'}], route=NODE),
    # Allowed, then refused: ferrum builds no network data.
    row('PATCH', NODE + '#network_data', 400, OWNER_MEMBER,
        body=[{'op': 'add', 'path': '/network_data/links', 'value': []}],
        route=NODE, version='1.66'),
    row('PATCH', NODE + '#owner', 200, SYSTEM_MEMBER,
        body=[{'op': 'replace', 'path': '/owner', 'value': tenancy.THIRD}],
        route=NODE),
    # The node fields of 1.82 to 1.104, each behind Ironic's rule.
    row('PATCH', NODE + '#shard', 200, SYSTEM_ADMIN,
        body=[{'op': 'add', 'path': '/shard', 'value': 'east'}],
        route=NODE, version='1.115'),
    row('PATCH', NODE + '#disable_power_off', 200, SYSTEM_ADMIN,
        body=[{'op': 'add', 'path': '/disable_power_off', 'value': True}],
        route=NODE, version='1.115'),
    row('PATCH', NODE + '#instance_name', 200, OWNER_MEMBER_LESSEE_ADMIN,
        body=[{'op': 'add', 'path': '/instance_name', 'value': 'vm'}],
        route=NODE, version='1.115'),
    # delete:self_owned_node: the owner's admin.
    row('DELETE', NODE, 204, SYSTEM_ADMIN | {'owner_admin'}),
    row('GET', NODE + '/states', 200, NODE_READERS),
    row('PUT', NODE + '/states/provision', 202, OWNER_MEMBER_LESSEE_ADMIN,
        body={'target': 'manage'}),
    row('PUT', NODE + '/states/power', 202, PROJECT_MEMBER,
        body={'target': 'power on'}),
    row('PUT', NODE + '/maintenance', 202, OWNER_MEMBER_LESSEE_ADMIN,
        body={'reason': 'x'}),
    row('DELETE', NODE + '/maintenance', 202, OWNER_MEMBER_LESSEE_ADMIN),
    row('GET', NODE + '/validate', 200, OWNER_MEMBER_LESSEE_ADMIN),
    row('GET', NODE + '/management/boot_device', 200, OWNER_ADMIN),
    row('PUT', NODE + '/management/boot_device', 204, OWNER_ADMIN,
        body={'boot_device': 'pxe'}),
    row('GET', NODE + '/management/boot_device/supported', 200,
        OWNER_ADMIN),
    # Ironic's baremetal:node:inject_nmi: system members, the owner's admin.
    row('PUT', NODE + '/management/inject_nmi', 204, OWNER_ADMIN),
    # The owner sees the node, not the lessee's allocation on it.
    row('GET', '/v1/nodes/{m}/allocation', 200, LESSEE_READERS,
        LESSEE_READERS, route=NODE + '/allocation'),
    # Allowed, then refused by the conductor: the node is active.
    row('DELETE', '/v1/nodes/{m}/allocation', 409, LESSEE_MEMBERS,
        LESSEE_READERS, route=NODE + '/allocation'),
    row('GET', NODE + '/vifs', 200, NODE_READERS),
    row('POST', NODE + '/vifs', 204, OWNER_MEMBER_LESSEE_ADMIN,
        body={'id': 'b4c0c9b6-64c2-4e5b-a1a1-1f5a3c6c2f01'}),
    row('DELETE', NODE + '/vifs/b4c0c9b6-64c2-4e5b-a1a1-1f5a3c6c2f01', 400,
        OWNER_MEMBER_LESSEE_ADMIN, route=NODE + '/vifs/<vif_id>'),
    *[row(method, NODE + '/vendor_passthru?method=nothing', 400,
          SYSTEM_ADMIN, body={} if method in ('POST', 'PUT', 'PATCH')
          else None)
      for method in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE')],
    row('GET', NODE + '/vendor_passthru/methods', 200, SYSTEM_ADMIN),
    # Ironic's baremetal:node:history:get: the owner's readers, no lessee.
    row('GET', NODE + '/history', 200, SYSTEM_READER | OWNER,
        version='1.78'),
    row('GET', NODE + '/history/7c2b6f0c-1b8e-4a51-9a57-1d7a0e6e4b11', 404,
        SYSTEM_READER | OWNER, route=NODE + '/history/<event_ident>',
        version='1.78'),
    row('GET', NODE + '/children', 200, NODE_READERS, version='1.87'),
    row('GET', NODE + '/firmware', 200, NODE_READERS, version='1.87'),
    # Ironic's baremetal:node:inventory:get: the owner's readers, no
    # lessee; the node has none (404).
    row('GET', NODE + '/inventory', 404, SYSTEM_READER | OWNER,
        version='1.87'),
    row('GET', '/v1/shards', 200, SYSTEM_READER, EVERYONE, version='1.87'),
    # fake-hardware has no virtual media: accepted (the worker fails), and
    # the list is the driver's 400.
    row('POST', NODE + '/vmedia', 204, PROJECT_MEMBER, version='1.98',
        body={'device_type': 'cdrom', 'image_url': 'http://192.0.2.1/a'}),
    row('DELETE', NODE + '/vmedia', 204, PROJECT_MEMBER, version='1.98'),
    row('GET', NODE + '/vmedia', 400, NODE_READERS, version='1.98'),
    row('GET', NODE + '/traits', 200, NODE_READERS),
    row('PUT', NODE + '/traits', 204, OWNER_ADMIN,
        body={'traits': ['CUSTOM_Y']}),
    row('DELETE', NODE + '/traits', 204, OWNER_ADMIN),
    row('PUT', NODE + '/traits/CUSTOM_Z', 204, OWNER_ADMIN,
        route=NODE + '/traits/<trait_name>'),
    row('DELETE', NODE + '/traits/CUSTOM_X', 204, OWNER_ADMIN,
        route=NODE + '/traits/<trait_name>'),
    row('GET', NODE + '/leases', 200, NODE_READERS),
    # ---- ports ----
    row('GET', '/v1/ports', 200, EVERYONE, EVERYONE,
        rows=_lists('ports')),
    row('GET', '/v1/ports/detail', 200, EVERYONE, EVERYONE,
        rows=_lists('ports')),
    # The rule against the node's owner comes first, as in Ironic: a
    # reader, the lessee and another project are 403 (the node is not
    # concealed: a missing one is the same 403 to them).
    row('POST', '/v1/ports', 201, SYSTEM_OR_OWNER_ADMIN,
        body={'node_uuid': '{n}', 'address': '52:54:00:ff:ff:{mac}'},
        hidden=403),
    row('GET', '/v1/ports/{p}', 200, NODE_READERS,
        route='/v1/ports/<port_ident>'),
    row('PATCH', '/v1/ports/{p}', 200, OWNER_ADMIN,
        body=[{'op': 'add', 'path': '/extra/x', 'value': 1}],
        route='/v1/ports/<port_ident>'),
    row('DELETE', '/v1/ports/{p}', 204, SYSTEM_OR_OWNER_ADMIN,
        route='/v1/ports/<port_ident>'),
    row('GET', NODE + '/ports', 200, NODE_READERS),
    row('GET', NODE + '/ports/detail', 200, NODE_READERS),
    # ---- port groups (Ironic judges them by their node, as ports) ----
    row('GET', '/v1/portgroups', 200, EVERYONE, EVERYONE,
        rows=_lists('portgroups')),
    row('GET', '/v1/portgroups/detail', 200, EVERYONE, EVERYONE,
        rows=_lists('portgroups')),
    # The rule first, as Ironic: a hidden node is judged as no node, 403.
    row('POST', '/v1/portgroups', 201, SYSTEM_OR_OWNER_ADMIN, EVERYONE,
        body={'node_uuid': '{n}'}),
    row('GET', '/v1/portgroups/{g}', 200, NODE_READERS,
        route='/v1/portgroups/<portgroup_ident>'),
    row('PATCH', '/v1/portgroups/{g}', 200, OWNER_ADMIN,
        body=[{'op': 'add', 'path': '/extra/x', 'value': 1}],
        route='/v1/portgroups/<portgroup_ident>'),
    row('DELETE', '/v1/portgroups/{g}', 204, SYSTEM_OR_OWNER_ADMIN,
        route='/v1/portgroups/<portgroup_ident>'),
    row('GET', '/v1/portgroups/{g}/ports', 200, NODE_READERS,
        route='/v1/portgroups/<portgroup_ident>/ports'),
    row('GET', '/v1/portgroups/{g}/ports/detail', 200, NODE_READERS,
        route='/v1/portgroups/<portgroup_ident>/ports/detail'),
    row('GET', NODE + '/portgroups', 200, NODE_READERS),
    row('GET', NODE + '/portgroups/detail', 200, NODE_READERS),
    # ---- chassis: system scope only (a chassis' nodes: the node lists) ----
    row('GET', '/v1/chassis', 200, SYSTEM_SCOPE_READER, EVERYONE),
    row('GET', '/v1/chassis/detail', 200, SYSTEM_SCOPE_READER, EVERYONE),
    row('POST', '/v1/chassis', 201, SYSTEM_ADMIN, EVERYONE,
        body={'description': 'new'}),
    row('GET', '/v1/chassis/{c}', 200, SYSTEM_SCOPE_READER, EVERYONE,
        route='/v1/chassis/<chassis_uuid>'),
    row('PATCH', '/v1/chassis/{c}', 200, SYSTEM_SCOPE_MEMBER, EVERYONE,
        body=[{'op': 'add', 'path': '/extra/x', 'value': 1}],
        route='/v1/chassis/<chassis_uuid>'),
    row('DELETE', '/v1/chassis/{c}', 204, SYSTEM_ADMIN, EVERYONE,
        route='/v1/chassis/<chassis_uuid>'),
    row('GET', '/v1/chassis/{c}/nodes', 200, EVERYONE, EVERYONE,
        route='/v1/chassis/<chassis_uuid>/nodes'),
    row('GET', '/v1/chassis/{c}/nodes/detail', 200, EVERYONE, EVERYONE,
        route='/v1/chassis/<chassis_uuid>/nodes/detail'),
    # ---- volume connectors and targets (on node n, powered off) ----
    # Without a node, baremetal:volume:get names no project.
    row('GET', '/v1/volume', 200, SYSTEM_READER, EVERYONE),
    row('GET', NODE + '/volume', 200, NODE_READERS),
    *[entry for kind, key, body in (
        ('connectors', 'vc', {'node_uuid': '{n}', 'type': 'iqn',
                              'connector_id': 'iqn.new.{suffix}'}),
        ('targets', 'vt', {'node_uuid': '{n}', 'volume_type': 'iscsi',
                           'boot_index': 1, 'volume_id': 'new'}))
      for one in ['/v1/volume/%s/{%s}' % (kind, key)]
      for route in ['/v1/volume/%s/<%s_uuid>' % (kind, kind[:-1])]
      for entry in (
          row('GET', '/v1/volume/' + kind, 200, EVERYONE, EVERYONE,
              rows=_lists(kind)),
          # The create rule is checked before the node: a hidden node is
          # a 403, as in Ironic.
          row('POST', '/v1/volume/' + kind, 201, OWNER_LESSEE_ADMIN,
              EVERYONE, body=body),
          row('GET', one, 200, NODE_READERS, route=route),
          row('PATCH', one, 200, OWNER_MEMBER_LESSEE_ADMIN, route=route,
              body=[{'op': 'add', 'path': '/extra/x', 'value': 1}]),
          row('DELETE', one, 204, OWNER_LESSEE_ADMIN, route=route),
          row('GET', NODE + '/volume/' + kind, 200, NODE_READERS))],
    # ---- allocations ----
    row('GET', '/v1/allocations', 200, EVERYONE, EVERYONE,
        rows=_lists('allocations', owner_sees=False)),
    row('POST', '/v1/allocations', 201, PROJECT_MEMBER | {'third_party'},
        EVERYONE, body={'resource_class': 'bronze'}),
    row('GET', '/v1/allocations/{a}', 200, LESSEE_READERS, LESSEE_READERS,
        route='/v1/allocations/<allocation_ident>'),
    row('PATCH', '/v1/allocations/{a}', 200, LESSEE_MEMBERS, LESSEE_READERS,
        body=[{'op': 'add', 'path': '/extra/x', 'value': 1}],
        route='/v1/allocations/<allocation_ident>'),
    row('DELETE', '/v1/allocations/{a}', 409, LESSEE_MEMBERS,
        LESSEE_READERS, route='/v1/allocations/<allocation_ident>'),
    # ---- leases ----
    row('GET', '/v1/leases', 200, EVERYONE, EVERYONE,
        rows=_lists('leases', owner_sees=False)),
    row('POST', '/v1/leases', 201, SYSTEM_MEMBER | {'owner_admin',
                                                    'owner_member'},
        EVERYONE, body={'project': tenancy.OWNER, 'owner': tenancy.OWNER,
                        'resource_class': 'gold',
                        'start': '{start}', 'end': '{end}'}),
    row('GET', '/v1/leases/{l}', 200, LESSEE_READERS, LESSEE_READERS,
        route='/v1/leases/<lease_ident>'),
    row('PATCH', '/v1/leases/{l}', 200, LESSEE_MEMBERS, LESSEE_READERS,
        body=[{'op': 'add', 'path': '/extra/x', 'value': 1}],
        route='/v1/leases/<lease_ident>'),
    row('DELETE', '/v1/leases/{l}', 204, LESSEE_MEMBERS, LESSEE_READERS,
        route='/v1/leases/<lease_ident>'),
    # ---- deploy templates: Ironic's system reader reads, admin writes ----
    row('GET', '/v1/deploy_templates', 200, SYSTEM_READER, EVERYONE,
        version='1.55'),
    row('POST', '/v1/deploy_templates', 201, SYSTEM_ADMIN, EVERYONE,
        body={'name': 'CUSTOM_NEW_{suffix}', 'steps': [TEMPLATE_STEP]},
        version='1.55'),
    row('GET', '/v1/deploy_templates/{dt}', 200, SYSTEM_READER, EVERYONE,
        route='/v1/deploy_templates/<template_ident>', version='1.55'),
    row('PATCH', '/v1/deploy_templates/{dt}', 200, SYSTEM_ADMIN, EVERYONE,
        body=[{'op': 'add', 'path': '/extra/x', 'value': 1}],
        route='/v1/deploy_templates/<template_ident>', version='1.55'),
    row('DELETE', '/v1/deploy_templates/{dt}', 204, SYSTEM_ADMIN, EVERYONE,
        route='/v1/deploy_templates/<template_ident>', version='1.55'),
    # ---- drivers, Placement status: system scope; conductors ----
    row('GET', '/v1/drivers', 200, SYSTEM_SCOPE_READER, EVERYONE),
    row('GET', '/v1/drivers/fake-hardware', 200, SYSTEM_SCOPE_READER,
        EVERYONE, route='/v1/drivers/<driver_name>'),
    row('GET', '/v1/drivers/fake-hardware/properties', 200,
        SYSTEM_SCOPE_READER, EVERYONE,
        route='/v1/drivers/<driver_name>/properties'),
    # Ironic's conductor rule takes project scope too: the service sees them.
    row('GET', '/v1/conductors', 200, SYSTEM_READER, EVERYONE),
    row('GET', '/v1/conductors/test-conductor', 200, SYSTEM_READER,
        EVERYONE, route='/v1/conductors/<hostname>'),
    row('GET', '/v1/placement/status', 200, SYSTEM_SCOPE_READER, EVERYONE),
    row('GET', '/metrics', 200, SYSTEM_SCOPE_READER, EVERYONE),
    # The feed: everyone follows, scoped (tests/functional/api/test_event).
    row('GET', '/v1/events', 200, EVERYONE, EVERYONE),
]

PUBLIC = {'/', '/v1', '/v1/lookup', '/v1/heartbeat/<node_ident>',
          '/v1/continue_inspection'}


def _route_of(entry):
    return entry['route'].split('#')[0].replace('{n}', '<node_ident>')


def test_every_route_and_method_has_a_row():
    covered = {(_route_of(entry), entry['method']) for entry in MATRIX}
    missing = [(path, method) for path, methods in routes.ROUTES.items()
               for method in methods if (path, method) not in covered]
    assert not missing, 'persona matrix rows missing for %s' % missing


def _expected(entry, persona):
    if persona in entry['answers']:
        return entry['answers'][persona]
    if persona in entry['allowed']:
        return entry['ok']
    return 403 if persona in entry['visible'] else entry['hidden']


def _fill(value, world):
    if isinstance(value, str):
        return value.format(**world)
    if isinstance(value, list):
        return [_fill(item, world) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, world) for key, item in value.items()}
    return value


def _names(response, entry):
    key = entry['path'].split('?')[0].rstrip('/').split('/')[-1]
    if key == 'detail':
        key = entry['path'].split('/')[2]
    items = response.get_json()[key]
    return {item.get('name') or item.get('address')
            or item.get('connector_id') or item.get('volume_id')
            for item in items}


def _add_volumes(db, world):
    """A chassis, and a volume connector and target on node n, which is
    powered off: changing them needs that."""
    suffix = world['suffix']
    node = node_obj.Node.get(db, world['n'])
    node.power_state = 'power off'
    node.save()
    world['c'] = chassis_obj.Chassis.create(db, {}).uuid
    world['vc'] = connector_obj.VolumeConnector.create(db, {
        'node_id': node.id, 'type': 'iqn',
        'connector_id': 'iqn.' + suffix}).uuid
    world['vt'] = target_obj.VolumeTarget.create(db, {
        'node_id': node.id, 'volume_type': 'iscsi', 'boot_index': 0,
        'volume_id': 'vol-' + suffix}).uuid
    return world


def _world(client, tokens, db, conductor, index):
    """What a row's path and body name: see tenancy.build_world."""
    world = tenancy.build_world(db, conductor.manager, str(index))
    world['l'] = tenancy.book(client, tokens, tenancy.LESSEE, world['m'],
                              'l-%d' % index)
    world['mac'] = '%02x' % index
    world['dt'] = template_obj.DeployTemplate.create(db, {
        'name': 'CUSTOM_DT_%d' % index, 'steps': [TEMPLATE_STEP]}).uuid
    world['start'], world['end'] = '2099-01-01T00:00:00', \
        '2099-01-02T00:00:00'
    return _add_volumes(db, world)


@pytest.fixture
def keystone_conf(keystone_conf):
    """The service persona elevated, as Ironic's option does."""
    keystone_conf.set_override('rbac_service_role_elevated_access', True)
    return keystone_conf


@pytest.fixture
def worlds(ks_client, tokens, db, conductor):
    """One world per persona (and one for the anonymous caller), and the
    names each list shows: every persona's rows are the lessee's and
    owner's, of the same two projects."""
    found = {}
    for index, persona in enumerate([*tenancy.PERSONAS, None]):
        found[persona] = _world(ks_client, tokens, db, conductor, index)
    # Another project's node (a port, a group, an allocation, a lease) and
    # a node of nobody's: only system readers list them.
    other = tenancy.build_world(db, conductor.manager, 'x',
                                owner=tenancy.OTHER, lessee=None)
    tenancy.book(ks_client, tokens, tenancy.OTHER, other['m'], 'l-x')
    _add_volumes(db, other)
    node_obj.Node.create(db, {'driver': 'fake-hardware', 'name': 'free'})
    return found


def _all_rows(worlds):
    suffixes = [world['suffix'] for world in worlds.values()]
    mine = {
        'nodes': {'%s-%s' % (kind, s) for s in suffixes for kind in 'nm'},
        'ports': {tenancy.mac(s) for s in suffixes},
        'portgroups': {'g-' + s for s in suffixes},
        'allocations': {'a-' + s for s in suffixes},
        'leases': {'l-' + s for s in suffixes},
        'connectors': {'iqn.' + s for s in suffixes},
        'targets': {'vol-' + s for s in suffixes}}
    rows = {'none': set(), **mine}
    rows.update({
        'nodes_all': mine['nodes'] | {'n-x', 'm-x', 'free'},
        'ports_all': mine['ports'] | {tenancy.mac('x')},
        'portgroups_all': mine['portgroups'] | {'g-x'},
        'allocations_all': mine['allocations'] | {'a-x'},
        'leases_all': mine['leases'] | {'l-x'},
        'connectors_all': mine['connectors'] | {'iqn.x'},
        'targets_all': mine['targets'] | {'vol-x'}})
    return rows


@pytest.mark.parametrize('entry', MATRIX, ids=lambda e: '%s %s' % (
    e['method'], e['path']))
def test_persona_matrix(ks_client, tokens, worlds, db, entry):
    expected_rows = _all_rows(worlds)
    failures = []
    for persona in [*tenancy.PERSONAS, None]:
        world = worlds[persona]
        path = _fill(entry['path'].split('#')[0], world)
        response = ks_client.open(
            path, method=entry['method'], json=_fill(entry['body'], world),
            headers=tenancy.headers(tokens, persona, **(
                {'X-OpenStack-Ironic-API-Version': entry['version']}
                if entry['version'] else {})))
        public = _route_of(entry) in PUBLIC
        want = (_expected(entry, persona) if persona is not None
                else entry['ok'] if public else 401)
        if response.status_code != want:
            failures.append('%s: %d, not %d (%s)' % (
                persona, response.status_code, want,
                response.get_data(as_text=True)[:200]))
            continue
        if persona is None and not public:
            assert response.headers['WWW-Authenticate'] == (
                'Keystone uri="%s"' % tenancy.KEYSTONE_URI)
        if entry['rows'] and persona is not None:
            kind = entry['rows'][persona]
            seen = _names(response, entry)
            if seen != expected_rows[kind]:
                failures.append('%s sees %s, not %s' % (
                    persona, sorted(seen), sorted(expected_rows[kind])))
    assert not failures, '\n'.join(failures)


@pytest.mark.parametrize('delay', [False, True],
                         ids=['decided', 'delay_auth_decision'])
def test_without_a_valid_token_every_non_public_route_is_401(
        keystone_conf, db, conductor, tokens, delay, caplog):
    """No token, one Keystone never issued, an expired one: 401 with
    auth_token's challenge before any policy or lookup, the same for a
    resource that exists and one that does not, even when
    ``[keystone_authtoken] delay_auth_decision`` lets auth_token defer."""
    keystone_conf.set_override('delay_auth_decision', delay,
                               group='keystone_authtoken')
    client = api_app.create_app(keystone_conf, db,
                                conductor.manager).test_client()
    # The operator learns that the option has no effect.
    assert ('delay_auth_decision is ignored' in caplog.text) is delay
    world = _world(client, tokens, db, conductor, 0)
    missing = dict(world, **{key: tenancy.new_uuid()
                             for key in (*'nmpgal', 'dt')})
    failures = []
    for entry in MATRIX:
        public = _route_of(entry) in PUBLIC
        for persona in (None, *tenancy.BAD_TOKENS):
            answers = []
            for names in (world, missing):
                response = client.open(
                    _fill(entry['path'].split('#')[0], names),
                    method=entry['method'], json=_fill(entry['body'], names),
                    headers=tenancy.headers(tokens, persona))
                answers.append((response.status_code,
                                response.headers.get('WWW-Authenticate'),
                                response.get_data(as_text=True)))
                if public:
                    break
            status, challenge, text = answers[0]
            if public:
                if status != entry['ok']:
                    failures.append('%s %s, %s: %d, not %d' % (
                        entry['method'], entry['path'], persona, status,
                        entry['ok']))
                continue
            if (status, challenge) != (401, 'Keystone uri="%s"' %
                                       tenancy.KEYSTONE_URI) or (
                    'requires authentication' not in text):
                failures.append('%s %s, %s: %d %s %s' % (
                    entry['method'], entry['path'], persona, status,
                    challenge, text[:150]))
            elif answers[0] != answers[1]:
                failures.append('%s %s, %s: a missing resource answers %s' %
                                (entry['method'], entry['path'], persona,
                                 answers[1][:2]))
    assert not failures, '\n'.join(failures)
