# SPDX-License-Identifier: Apache-2.0
"""Property tests: no request, however malformed, gets a 500 or a traceback.

Hypothesis throws junk at every route and method of the route table
(``ferrum.api.routes.ROUTES``, so new routes are covered as they are
added): random JSON values and bytes as bodies, wrong types in otherwise
plausible bodies, garbage microversion and Content-Type headers, random
query strings, random path segments and JSON Patch documents. Path
parameters are sometimes a real seeded node, port, trait, driver or
conductor, so the handlers behind them run, and sometimes junk.

Each property runs on SQLite and on PostgreSQL (which refuses NUL in
text). Every answer must be below 500, free of tracebacks, and every error must
have Ironic's body: ``{"error_message": "<JSON string with faultstring>"}``.
"""

import datetime
import json
import re
import urllib.parse
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from ferrum.api import app as api_app
from ferrum.api import routes
from ferrum.conductor import service
from ferrum.rpc import server as rpc_server
from tests.polling import wait_for

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
HOST = 'test-conductor'
FUZZ_VIF = 'fuzz-vif'  # the conductor fixture's host (tests/conftest.py)
SETTINGS = hypothesis.settings(
    max_examples=300, deadline=None, database=None,
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture,
                           hypothesis.HealthCheck.too_slow])

#: (path template, method), every one the route table serves.
ROUTE_METHODS = sorted((path, method) for path, methods in
                       routes.ROUTES.items() for method in methods)
_PARAM = re.compile(r'<(?:[a-z_]+:)?([a-z_]+)>')
ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS',
               'TRACE', 'PURGE']


class Real:
    """A placeholder for a real identifier, resolved when the request runs.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return '<real %s>' % self.kind


class World:
    """A node, a port and an allocation to aim at; recreated when deleted."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.node: dict[str, Any] = {}
        self.port: dict[str, Any] = {}
        self.allocation: dict[str, Any] = {}
        self.lease: dict[str, Any] = {}
        #: collection -> the one to aim at (chassis, volume/connectors,
        #: volume/targets).
        self.others: dict[str, dict[str, Any]] = {}
        self.template: dict[str, Any] = {}
        self.count = 0

    def __repr__(self) -> str:
        return '<World node=%s port=%s>' % (self.node.get('uuid'),
                                            self.port.get('uuid'))

    def ensure(self) -> None:
        if not self.node or self.client.get(
                '/v1/nodes/' + self.node['uuid'],
                headers=V).status_code != 200:
            self.count += 1
            response = self.client.post('/v1/nodes', headers=V, json={
                'driver': 'fake-hardware', 'name': 'fuzz-%d' % self.count,
                'resource_class': 'fuzz', 'driver_info': {'password': 'x'},
                'properties': {'cpus': 2}, 'extra': {'a': {'b': 1}}})
            assert response.status_code == 201, response.get_data()
            self.node = response.get_json()
            response = self.client.put(
                '/v1/nodes/%s/traits/CUSTOM_FUZZ' % self.node['uuid'],
                headers=V)
            assert response.status_code == 204, response.get_data()
            self.port = {}
        if 'POST' not in routes.ROUTES.get('/v1/ports', {}):
            return
        if not self.port or self.client.get(
                '/v1/ports/' + self.port['uuid'],
                headers=V).status_code != 200:
            self.count += 1
            response = self.client.post('/v1/ports', headers=V, json={
                'node_uuid': self.node['uuid'],
                'address': '52:54:00:00:%02x:%02x' % divmod(
                    self.count % 65536, 256),
                'extra': {'a': 'b'}})
            assert response.status_code == 201, response.get_data()
            self.port = response.get_json()
        self._ensure_vif()
        self._ensure_allocation()
        self._ensure_lease()
        self._ensure_template()
        self._ensure_others()

    def _ensure_others(self) -> None:
        """A chassis, and a volume connector and target on the node."""
        for collection in ('chassis', 'volume/connectors', 'volume/targets'):
            found = self.others.get(collection)
            if found and self.client.get(
                    '/v1/%s/%s' % (collection, found['uuid']),
                    headers=V).status_code == 200:
                continue
            self.count += 1
            body = {'chassis': {'description': 'fuzz'},
                    'volume/connectors': {
                        'node_uuid': self.node['uuid'], 'type': 'iqn',
                        'connector_id': 'iqn.fuzz:%d' % self.count},
                    'volume/targets': {
                        'node_uuid': self.node['uuid'],
                        'volume_type': 'iscsi', 'boot_index': self.count,
                        'volume_id': 'fuzz-%d' % self.count}}[collection]
            response = self.client.post('/v1/' + collection, headers=V,
                                        json=body)
            assert response.status_code == 201, response.get_data()
            self.others[collection] = response.get_json()

    def _ensure_vif(self) -> None:
        # Attached, or already attached (409): either way there is one to
        # list and detach.
        response = self.client.post(
            '/v1/nodes/%s/vifs' % self.node['uuid'], headers=V,
            json={'id': FUZZ_VIF})
        assert response.status_code in (204, 409), response.get_data()

    def _ensure_allocation(self) -> None:
        if self.allocation and self.client.get(
                '/v1/allocations/' + self.allocation['uuid'],
                headers=V).status_code == 200:
            return
        self.count += 1
        response = self.client.post('/v1/allocations', headers=V, json={
            'resource_class': 'fuzz', 'name': 'fuzz-alloc-%d' % self.count,
            'traits': ['CUSTOM_FUZZ'], 'extra': {'a': 'b'}})
        assert response.status_code == 201, response.get_data()
        self.allocation = response.get_json()

    def _ensure_lease(self) -> None:
        """A pending lease (on a node of its own) to read, patch, delete."""
        if self.lease and self.client.get(
                '/v1/leases/' + self.lease['uuid']).get_json().get(
                    'status') == 'pending':
            return
        self.count += 1
        response = self.client.post('/v1/nodes', headers=V, json={
            'driver': 'fake-hardware', 'resource_class': 'fuzz-lease'})
        assert response.status_code == 201, response.get_data()
        start = datetime.datetime.now(datetime.timezone.utc) + (
            datetime.timedelta(days=1 + self.count))
        response = self.client.post('/v1/leases', json={
            'project': 'fuzz', 'name': 'fuzz-lease-%d' % self.count,
            'candidate_nodes': [response.get_json()['uuid']],
            'start': start.isoformat(),
            'end': (start + datetime.timedelta(hours=1)).isoformat()})
        assert response.status_code == 201, response.get_data()
        self.lease = response.get_json()

    def _ensure_template(self) -> None:
        if self.template and self.client.get(
                '/v1/deploy_templates/' + self.template['uuid'],
                headers=V).status_code == 200:
            return
        self.count += 1
        response = self.client.post('/v1/deploy_templates', headers=V, json={
            'name': 'CUSTOM_FUZZ_%d' % self.count, 'extra': {'a': 'b'},
            'steps': [{'interface': 'deploy', 'step': 'x', 'args': {},
                       'priority': 1}]})
        assert response.status_code == 201, response.get_data()
        self.template = response.get_json()

    def resolve(self, value: Any) -> str:
        if not isinstance(value, Real):
            return str(value)
        return {
            'node_uuid': self.node.get('uuid', ''),
            'node_name': self.node.get('name') or '',
            'port_uuid': self.port.get('uuid', ''),
            'trait': 'CUSTOM_FUZZ',
            'driver': 'fake-hardware',
            'conductor': HOST,
            'allocation_uuid': self.allocation.get('uuid', ''),
            'allocation_name': self.allocation.get('name') or '',
            'vif_id': FUZZ_VIF,
            # A UUID no history entry has (entries come and go).
            'event_uuid': FUZZ_VIF,
            'lease_uuid': self.lease.get('uuid', ''),
            'lease_name': self.lease.get('name') or '',
            **{kind: self.others.get(collection, {}).get('uuid', '')
               for kind, collection in (
                   ('chassis_uuid', 'chassis'),
                   ('connector_uuid', 'volume/connectors'),
                   ('target_uuid', 'volume/targets'))},
            'template_uuid': self.template.get('uuid', ''),
            'template_name': self.template.get('name') or '',
        }[value.kind]


@pytest.fixture(params=['sqlite', 'postgresql'])
def world(request, conf):
    """The API on SQLite (the ``client`` fixture) or on PostgreSQL."""
    if request.param == 'sqlite':
        return World(request.getfixturevalue('client'))
    database = request.getfixturevalue('pg_db')
    conductor = service.ConductorService(conf, db=database)
    conductor.start(start_periodics=False)
    request.addfinalizer(conductor.stop)
    app = api_app.create_app(conf, database,
                             conductor.manager)
    return World(app.test_client())


# ---- strategies --------------------------------------------------------

#: Characters databases refuse: PostgreSQL text cannot hold NUL, and a
#: lone surrogate (valid in a JSON string) cannot be encoded as UTF-8.
NUL = 'a\x00b'
SURROGATE = 'a\ud800b'
_LEAF = (st.none() | st.booleans() | st.integers()
         | st.floats(allow_nan=False) | st.text(max_size=30)
         | st.sampled_from(['', 'true', 'null', '1.65', 'fake-hardware',
                            'power off', 'manage', 'CUSTOM_X', 'pxe',
                            '******', 'x' * 300, NUL, SURROGATE]))
JSON = st.recursive(
    _LEAF, lambda children: (st.lists(children, max_size=4)
                             | st.dictionaries(st.text(max_size=12),
                                               children, max_size=4)),
    max_leaves=10)

#: Every key some request body of the Ironic API has.
_BODY_KEYS = [
    'target', 'clean_steps', 'configdrive', 'timeout', 'reason', 'traits',
    'boot_device', 'persistent', 'driver', 'name', 'uuid', 'resource_class',
    'driver_info', 'properties', 'extra', 'instance_info', 'instance_uuid',
    'description', 'owner', 'lessee', 'conductor_group', 'protected',
    'retired', 'automated_clean', 'chassis_uuid', 'power_interface',
    'management_interface', 'deploy_interface', 'node_uuid', 'address',
    'local_link_connection', 'pxe_enabled', 'physical_network',
    'is_smartnic', 'portgroup_uuid', 'disable_ramdisk', 'deploy_steps',
    'resource_class', 'traits', 'candidate_nodes', 'node', 'state',
    'project', 'count', 'start', 'end', 'before_end']
_PLAUSIBLE = st.sampled_from([
    'active', 'deleted', 'manage', 'provide', 'clean', 'abort', 'adopt',
    'inspect', 'rebuild', 'rescue', 'undeploy', 'deploy', 'power on',
    'power off', 'rebooting', 'soft power off', 'soft rebooting', 'pxe',
    'disk', 'fake-hardware', 'fake', 'noop', 'CUSTOM_A', ['CUSTOM_A'],
    [{'interface': 'deploy', 'step': 'erase_devices'}], {'a': 'b'},
    '52:54:00:12:34:56', 'not-a-mac', '00000000-0000-0000-0000-000000000000',
    Real('node_uuid'), 0, -1, 2 ** 63, True, None, NUL, SURROGATE,
    {NUL: SURROGATE}, 1e308, 'fuzz', 'fuzz-lease', '2099-01-01T00:00:00Z',
    '2026-11-25T00:00:00', '9999-12-31T23:59:59-14:00', 'now', 3])
STRUCTURED = st.dictionaries(st.sampled_from(_BODY_KEYS),
                             _PLAUSIBLE | JSON, max_size=5)


def _encode(value: Any) -> bytes:
    return json.dumps(value).encode()


_HEADER_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xff,
                           blacklist_categories=('Cc',)), max_size=40)
VERSIONS = st.one_of(
    st.sampled_from([
        '1.11', '1.65', '1.37', 'latest', 'LATEST', ' latest ', '1.1',
        '1.2', '1.4', '1.5', '1.8', '1.9', '1.10', '1.28', '1.66', '1.999',
        '2.0', '0.9', '1.', '1', '.5', '1.5.1',
        '1.0065', '1.065', ' 1.20 ', '1.2e1', '-1.5', '1.-5', '1.a',
        '99999999999999999999.1', '1.99999999999999999999', '', ' ',
        'v1.5', '1,5', '1.5, 1.6', 'null', '\u0661.\u0662']),
    _HEADER_TEXT)
#: Versions where behaviour changes (names, fields, initial state, VIFs,
#: traits, detail, reset_interfaces), from the minimum to the maximum.
SERVED_VERSIONS = ['1.1', '1.4', '1.5', '1.8', '1.9', '1.10', '1.11', '1.20',
                   '1.28', '1.37', '1.43', '1.45', '1.65', 'latest']
OPENSTACK_VERSIONS = st.one_of(
    VERSIONS.map(lambda v: 'baremetal ' + v),
    st.sampled_from(['baremetal', 'compute 1.2',
                     'baremetal 1.20, compute 2.1',
                     'baremetal 1.20, baremetal 1.21',
                     'BAREMETAL 1.20', 'baremetal  1.20', ',', ' ']),
    _HEADER_TEXT)
CONTENT_TYPES = st.one_of(
    st.sampled_from([
        'application/json', 'application/json; charset=utf-8',
        'application/json; charset=utf-16', 'application/json; charset=xx',
        'text/plain', 'application/x-www-form-urlencoded',
        'multipart/form-data', 'multipart/form-data; boundary=x',
        'application/octet-stream', 'application/merge-patch+json',
        'application/json-patch+json', '', ';;;', '*/*']),
    _HEADER_TEXT)
HEADERS = st.fixed_dictionaries({}, optional={
    'X-OpenStack-Ironic-API-Version': VERSIONS,
    'OpenStack-API-Version': OPENSTACK_VERSIONS,
    'Content-Type': CONTENT_TYPES,
    'Accept': st.sampled_from(['application/json', 'text/html', '*/*',
                               'application/xml', '']) | _HEADER_TEXT,
    'Accept-Language': _HEADER_TEXT,
    'X-Auth-Token': _HEADER_TEXT,
    'Authorization': st.sampled_from(['Basic', 'Basic !!!', 'Basic Og==',
                                      'Bearer x']) | _HEADER_TEXT,
})

_JUNK_SEGMENT = st.one_of(
    st.text(max_size=40),
    st.sampled_from([
        '', ' ', '.', '..', '%', '%00', '%2F', '\\', 'null', 'None', '0', '-1',
        '1' * 30, 'x' * 500, '00000000-0000-0000-0000-000000000000',
        '00000000000000000000000000000000', 'detail', 'states', 'ports',
        'fake-hardware', 'CUSTOM_' + 'A' * 300, 'a b', '\u2603', '?x=1',
        '#frag', ';a=b', NUL, '\x00', 'CUSTOM_\x00']))
_REALS = {'node': ['node_uuid', 'node_name'], 'port': ['port_uuid'],
          'trait': ['trait'], 'driver': ['driver'],
          'hostname': ['conductor'], 'conductor': ['conductor'],
          'allocation': ['allocation_uuid', 'allocation_name'],
          'vif': ['vif_id'], 'lease': ['lease_uuid', 'lease_name'],
          'event': ['event_uuid'], 'chassis': ['chassis_uuid'],
          'connector': ['connector_uuid'], 'target': ['target_uuid'],
          'template': ['template_uuid', 'template_name']}


def _segment_for(param: str) -> st.SearchStrategy[Any]:
    for word, kinds in _REALS.items():
        if word in param:
            reals = st.sampled_from([Real(kind) for kind in kinds])
            return st.one_of(reals, reals, reals, _JUNK_SEGMENT)
    return _JUNK_SEGMENT


@st.composite
def _paths(draw: Any, template: str) -> list[tuple[bool, Any]]:
    """The template as (is a parameter, literal text or drawn value)."""
    parts: list[tuple[bool, Any]] = []
    position = 0
    for match in _PARAM.finditer(template):
        parts.append((False, template[position:match.start()]))
        parts.append((True, draw(_segment_for(match.group(1)))))
        position = match.end()
    parts.append((False, template[position:]))
    return parts


def _route(methods: list[str] | None = None) -> st.SearchStrategy[Any]:
    """(path parts, method) of a served route; sometimes an unserved verb."""
    return st.sampled_from(ROUTE_METHODS).flatmap(
        lambda route: st.tuples(
            _paths(route[0]),
            st.sampled_from(methods) if methods else st.one_of(
                st.just(route[1]), st.just(route[1]),
                st.sampled_from(ALL_METHODS))))


_QUERY_KEYS = [
    'limit', 'marker', 'sort_key', 'sort_dir', 'fields', 'detail',
    'provision_state', 'maintenance', 'associated', 'instance_uuid',
    'driver', 'resource_class', 'fault', 'conductor_group', 'owner',
    'description_contains', 'retired', 'lessee', 'node', 'node_uuid',
    'address', 'type', 'reset_interfaces', 'portgroup', 'shard', 'state',
    'status', 'project', 'start', 'end']
_QUERY_VALUES = st.one_of(
    st.sampled_from([
        '', '0', '1', '-1', '1000000000000', '1.5', 'true', 'false', 'True',
        'yes', 'asc', 'desc', 'ASC', 'sideways', 'uuid', 'id', 'name',
        'driver_info', 'properties', 'traits', 'uuid,name', 'uuid,,name',
        ',', 'nonsense,uuid', 'enroll', 'available', 'fake-hardware',
        'dynamic', 'classic', '00000000-0000-0000-0000-000000000000',
        Real('node_uuid'), Real('node_name'), Real('port_uuid'),
        Real('allocation_uuid'), Real('lease_uuid'), 'pending,active',
        '2026-12-01T00:00:00Z', '2026-13-01', 'allocating', 'error', '%',
        '%zz', 'x' * 300, NUL, '\x00']),
    st.text(max_size=30))
QUERIES = st.lists(st.tuples(st.sampled_from(_QUERY_KEYS)
                             | st.text(max_size=10), _QUERY_VALUES),
                   max_size=6)

_PATCH_PATHS = st.one_of(
    st.sampled_from([
        '/name', '/driver', '/driver_info', '/driver_info/password',
        '/driver_info/new', '/properties', '/properties/cpus',
        '/properties/new/deep', '/extra', '/extra/a', '/extra/a/b',
        '/extra/a/b/c', '/extra/~1', '/extra/~', '/extra/-', '/instance_info',
        '/instance_info/image_source', '/instance_uuid', '/resource_class',
        '/conductor_group', '/owner', '/lessee', '/description',
        '/protected', '/protected_reason', '/retired', '/retired_reason',
        '/automated_clean', '/power_interface', '/network_interface',
        '/storage_interface', '/provision_state', '/power_state', '/uuid',
        '/id', '/traits', '/traits/0', '/maintenance', '/reservation',
        '/created_at', '/links', '/ports', '/node_uuid', '/address',
        '/local_link_connection/port_id', '/pxe_enabled',
        '/physical_network', '/end', '/start', '/nodes', '/count', '/status',
        '/', '', 'name', '//', '/-', '/0']),
    st.text(max_size=20))
_PATCH_OPS = st.fixed_dictionaries(
    {'op': st.sampled_from(['add', 'replace', 'remove', 'move', 'copy',
                            'test', 'ADD', '']) | JSON,
     'path': _PATCH_PATHS | JSON},
    optional={'value': _PLAUSIBLE | JSON, 'from': _PATCH_PATHS,
              'extra': JSON})
_NAMES = st.from_regex(r'\A[a-zA-Z0-9._~-]{1,20}\Z')
#: Well-typed values for fields a PATCH may change, so that some succeed.
_TYPED = {
    '/name': _NAMES | st.none(), '/description': st.text(max_size=50),
    '/owner': st.text(max_size=20), '/lessee': st.text(max_size=20),
    '/resource_class': _NAMES, '/conductor_group': _NAMES,
    '/protected': st.booleans(), '/retired': st.booleans(),
    '/automated_clean': st.booleans() | st.none(),
    '/extra': st.dictionaries(st.text(max_size=8), JSON, max_size=3),
    '/extra/a': JSON, '/extra/new': JSON, '/properties/cpus': JSON,
    '/driver_info/password': st.sampled_from(['******', 'new']),
    '/driver_info/fake_fail': st.just([]), '/instance_info/x': JSON,
    '/instance_uuid': st.uuids().map(str) | st.none(),
    '/driver': st.sampled_from(['fake-hardware', 'ipmi', 'oneview']),
    '/power_interface': st.sampled_from(['fake', 'ipmitool', None]),
    '/management_interface': st.sampled_from(['fake', 'noop', 'x']),
    '/address': st.sampled_from(['52:54:00:ab:cd:ef', 'AA:BB:CC:DD:EE:FF',
                                 'zz']),
    '/pxe_enabled': st.booleans(), '/physical_network': _NAMES,
    '/local_link_connection': st.fixed_dictionaries({}, optional={
        'switch_id': st.sampled_from(['00:11:22:33:44:55', 'x']),
        'port_id': _NAMES, 'switch_info': _NAMES}),
    '/is_smartnic': st.booleans(),
    '/end': st.sampled_from(['2099-01-01T00:00:00Z', '2000-01-01T00:00:00Z',
                             'soon', '9999-12-31T23:59:59+14:00']),
    '/node_uuid': st.sampled_from([Real('node_uuid'),
                                   '00000000-0000-0000-0000-000000000000']),
}
_TYPED_OPS = st.sampled_from(sorted(_TYPED)).flatmap(
    lambda path: st.fixed_dictionaries({
        'op': st.sampled_from(['add', 'replace', 'remove']),
        'path': st.just(path), 'value': _TYPED[path]}))
PATCHES = st.one_of(
    st.lists(_TYPED_OPS, min_size=1, max_size=3),
    st.lists(_TYPED_OPS | _PATCH_OPS, min_size=1, max_size=3),
    st.lists(_PATCH_OPS, max_size=4),
    st.lists(_PATCH_OPS, min_size=1, max_size=1),
    st.lists(JSON, max_size=3),
    JSON)


#: Bodies built to hurt: deeper than any parser's stack, over the size
#: limit, in encodings other than UTF-8 (issue 16). Each must get a 4xx.
_MIB = 1024 * 1024
HOSTILE = st.sampled_from([
    b'[' * 100000, b'{"a":' * 20000, b'[' * 26 + b']' * 26,
    b'{"driver": "' + b'x' * (_MIB + 10) + b'"}',
    b'{"candidate_nodes": [' + b','.join([b'"n"'] * 5000) + b']}',
    '{"driver": "fake-hardware"}'.encode('utf-16'),
    '{"driver": "fake-hardware"}'.encode('utf-32'),
    '{"driver": "fake-hardware"}'.encode('utf-8-sig'),
    b'{"target": "power on", "timeout": 1' + b'0' * 40 + b'}',
])


def _run_of(prefix: bytes, unit: bytes, size: int, tail: bytes) -> bytes:
    return prefix + unit * max(1, size // len(unit)) + tail


#: Issue 27: what a backtracking request scanner chokes on. Runs of one
#: unit (letters, backslashes, escaped quotes, quotes and brackets) of any
#: length up to the size limit, unterminated or ending on a lone backslash,
#: after any opening. A scanner super-linear on one of them never answers.
SCANNER_RUNS = st.builds(
    _run_of,
    st.sampled_from([b'', b'"', b'{"driver": "', b'["', b'{"a": [1, "',
                     b'[' * 30 + b'"', b'{"jsonrpc": "2.0", "method": "']),
    st.sampled_from([b'x', b'\\', b'\\"', b'"', b'\\\\"', b'["', b'[]',
                     b'][', b'"a",', b'x\\', b'\\u00e9',
                     '\u00e9'.encode()]),
    st.sampled_from([24, 40, 100, 4096, 65536, _MIB - 64])
    | st.integers(0, 300),
    st.sampled_from([b'', b'\\', b'"', b']', b'"}']))
BODIES = st.one_of(
    st.none(),
    st.binary(max_size=120),
    st.text(max_size=80).map(str.encode),
    JSON.map(_encode),
    STRUCTURED,  # encoded once real identifiers are known
    PATCHES,  # JSON Patch documents, at every route and method
    st.sampled_from([b'{', b'[', b'null', b'{"target": ', b'\xff\xfe{}',
                     b'{"a": NaN}', b'{"target": Infinity}', b'1e999',
                     b'[' * 500 + b']' * 500, b'{"a": 1, "a": 2}',
                     '{"name": "\u00e9"}'.encode('latin-1'),
                     b'\x00' * 16]),
    HOSTILE,
    SCANNER_RUNS,
)


# ---- the request and the checks ----------------------------------------

def _substitute(world: World, value: Any) -> Any:
    if isinstance(value, Real):
        return world.resolve(value)
    if isinstance(value, dict):
        return {key: _substitute(world, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(world, item) for item in value]
    return value


def _path(world: World, parts: list[tuple[bool, Any]]) -> str:
    return ''.join(
        urllib.parse.quote(world.resolve(value), safe='') if is_param
        else value for is_param, value in parts)


def _query(world: World, pairs: list[tuple[Any, Any]]) -> str:
    return urllib.parse.urlencode(
        [(key, world.resolve(value)) for key, value in pairs])


def _body(world: World, body: Any) -> bytes | None:
    """Bytes as drawn; JSON documents with real identifiers filled in."""
    if body is None or isinstance(body, bytes):
        return body
    return _encode(_substitute(world, body))


def request(world: World, method: str, path: str, body: Any = None,
            headers: dict[str, str] | None = None,
            query: str = '') -> Any:
    """Send one request and check the answer's shape."""
    body = _body(world, body)
    target, extra = path, {}
    if path.startswith('//'):
        # A client sends "//x" for an empty first segment, but Flask's test
        # client would read it as a URL of host "x": give the server the
        # path as a WSGI server would (decoded, UTF-8 bytes as latin-1).
        target = '/'
        extra['environ_overrides'] = {'PATH_INFO': urllib.parse.unquote(
            path).encode('utf-8', 'surrogateescape').decode('latin-1')}
    response = world.client.open(target, method=method, data=body,
                                 headers=headers or {}, query_string=query,
                                 **extra)
    context = '%s %s?%s\nheaders: %r\nbody: %r\n-> %d %r' % (
        method, path, query, headers, body if body is None else body[:300],
        response.status_code, response.get_data()[:1000])
    if currently_in_test_context():  # --hypothesis-show-statistics
        hypothesis.event('%s -> %d' % (method, response.status_code))
    assert response.status_code < 500, context
    data = response.get_data(as_text=True)
    assert 'Traceback' not in data, context
    if response.status_code >= 400 and method != 'HEAD':
        try:
            document = json.loads(data)
            fault = json.loads(document['error_message'])
        except (ValueError, KeyError, TypeError) as exc:
            pytest.fail('not an Ironic error body (%s): %s' % (exc, context))
        assert isinstance(fault.get('faultstring'), str), context
        assert fault['faultstring'], context
        assert 'Traceback' not in fault['faultstring'], context
    return response


# ---- the properties ----------------------------------------------------

def test_route_table_is_covered():
    """Guard: the strategies see every route (and ports once served)."""
    assert ('/v1/nodes/<node_ident>', 'PATCH') in ROUTE_METHODS
    for path, _method in ROUTE_METHODS:
        for param in _PARAM.findall(path):
            assert any(word in param for word in _REALS), (
                'teach test_fuzz about the path parameter <%s>' % param)


def _literal(path: str) -> list[tuple[bool, Any]]:
    return [(False, path)]


def _node(suffix: str = '') -> list[tuple[bool, Any]]:
    return [(False, '/v1/nodes/'), (True, Real('node_uuid')),
            (False, suffix)]


@SETTINGS
@hypothesis.given(route=_route(), body=BODIES, headers=HEADERS)
@hypothesis.example(route=(_literal('/v1/nodes'), 'POST'), headers=V,
                    body={'driver': 'fake-hardware', 'description': NUL})
@hypothesis.example(route=(_literal('/v1/nodes'), 'POST'), headers=V,
                    body={'driver': 'fake-hardware', 'owner': SURROGATE})
@hypothesis.example(route=(_literal('/v1/nodes'), 'POST'), headers=V,
                    body={'driver': 'fake-hardware', 'extra': {NUL: NUL}})
@hypothesis.example(route=(_node('/maintenance'), 'PUT'), headers=V,
                    body={'reason': NUL})
@hypothesis.example(route=(_literal('/v1/ports'), 'POST'), headers=V,
                    body={'node_uuid': Real('node_uuid'),
                          'address': '52:54:00:00:ff:01',
                          'physical_network': NUL})
def test_malformed_bodies(world, route, body, headers):
    world.ensure()
    parts, method = route
    request(world, method, _path(world, parts), body, headers)


@SETTINGS
@hypothesis.given(route=_route(), headers=HEADERS,
                  body=st.none() | STRUCTURED)
def test_random_headers(world, route, headers, body):
    world.ensure()
    parts, method = route
    request(world, method, _path(world, parts), body, headers)


@SETTINGS
@hypothesis.given(route=_route(['GET']), query=QUERIES,
                  version=st.sampled_from(SERVED_VERSIONS),
                  raw=st.none() | st.text(max_size=60))
@hypothesis.example(route=(_literal('/v1/nodes'), 'GET'), version='1.65',
                    query=[('resource_class', NUL)], raw=None)
@hypothesis.example(route=(_literal('/v1/ports'), 'GET'), version='1.65',
                    query=[('node', NUL)], raw=None)
def test_random_query_strings(world, route, query, version, raw):
    world.ensure()
    parts, method = route
    headers = {'X-OpenStack-Ironic-API-Version': version}
    path = _path(world, parts)
    if path in routes.ROUTES:  # the lists: the most parameters
        request(world, method, path, headers=headers,
                query=_query(world, query))
    request(world, method, path, headers=headers,
            query=raw if raw is not None else _query(world, query))


_PATH_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=('Cs',)), max_size=60)


@SETTINGS
@hypothesis.given(route=_route(), extra=st.lists(_JUNK_SEGMENT, max_size=3),
                  raw=_PATH_TEXT, method=st.sampled_from(ALL_METHODS),
                  body=st.none() | JSON.map(_encode))
@hypothesis.example(route=(_node(), 'GET'), extra=[], raw=NUL,
                    method='GET', body=None)
# An empty first segment: "//0:::..." is a path, not a host.
@hypothesis.example(route=(_literal('/'), 'GET'),
                    extra=['', '0:::' + '\x80' * 5 + '\U00010000' * 2],
                    raw='', method='GET', body=None)
def test_random_paths(world, route, extra, raw, method, body):
    world.ensure()
    parts, route_method = route
    path = _path(world, parts).rstrip('/')
    for segment in extra:
        path += '/' + urllib.parse.quote(segment, safe='')
    request(world, route_method, path, body, V)
    request(world, method, '/' + urllib.parse.quote(raw, safe='/'),
            body, V)
    request(world, method, '/v1/' + urllib.parse.quote(raw), body, V)


_PATCHABLE = sorted(path for path, methods in routes.ROUTES.items()
                    if 'PATCH' in methods)


@SETTINGS
@hypothesis.given(template=st.sampled_from(_PATCHABLE), patch=PATCHES,
                  version=st.sampled_from(SERVED_VERSIONS),
                  reset=st.sampled_from([None, 'true', 'false', 'junk']),
                  junk_ident=st.sampled_from([False] * 5 + [True]))
def test_json_patch(world, template, patch, version, reset, junk_ident):
    world.ensure()
    kind = 'port_uuid' if template.startswith('/v1/ports') else 'node_uuid'
    ident = '00000000-0000-0000-0000-000000000000' if junk_ident else (
        world.resolve(Real(kind)))
    path = _PARAM.sub(ident, template)
    query = '' if reset is None else 'reset_interfaces=' + reset
    response = request(world, 'PATCH', path,
                       _encode(_substitute(world, patch)),
                       {'X-OpenStack-Ironic-API-Version': version,
                        'Content-Type': 'application/json'}, query)
    if response.status_code == 200:
        # A successful PATCH answers with the resource, as a GET would.
        assert response.get_json()['uuid'] == ident


@pytest.mark.parametrize('reason', [NUL, 'x' * 4096, '\u2603 \U0001f600'])
def test_accepted_maintenance_is_applied(world, reason):
    """A 202 is a promise: the reason is stored, or the request refused."""
    world.ensure()
    uuid = world.node['uuid']
    response = request(world, 'PUT', '/v1/nodes/%s/maintenance' % uuid,
                       {'reason': reason}, V)
    if response.status_code != 202:
        assert response.status_code == 400, response.get_data()
        return

    def applied():
        node = world.client.get('/v1/nodes/' + uuid, headers=V).get_json()
        return node['maintenance'] and node['maintenance_reason'] == reason

    wait_for(applied, timeout=5, what='maintenance with the accepted reason')


# A super-linear scan would not finish at all (hours): fail instead.
@pytest.mark.timeout(600)
@hypothesis.settings(SETTINGS, max_examples=100)
@hypothesis.given(route=_route(['POST', 'PUT', 'PATCH']), body=SCANNER_RUNS)
@hypothesis.example(route=(_literal('/v1/nodes'), 'POST'),
                    body=b'{"driver": "' + b'x' * 40)
def test_scanner_worst_cases(world, route, body):
    """The request scanner's worst cases get a 4xx, or a JSON-RPC error."""
    world.ensure()
    parts, method = route
    request(world, method, _path(world, parts), body,
            {'Content-Type': 'application/json'})
    # No conductor behind it: every call is an error, none a traceback.
    answer = rpc_server.handle(None, HOST, body)
    assert isinstance(answer['error']['code'], int), answer
