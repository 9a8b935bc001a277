# SPDX-License-Identifier: Apache-2.0
"""The simulated OneView appliance's state: hardware, profiles, tasks, faults.

Everything here is plain data behind one lock; ``ovsim.py`` maps HTTP onto
it. Tasks are settled lazily: a task records when it finishes and what it
does then, and any read of the state first applies the tasks that are due,
so no timer thread is needed and a slow task needs no polling to finish.
"""

import copy
import fnmatch
import re
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

#: Deterministic URIs: uuid5 of a fixed namespace and a per-kind counter.
_NAMESPACE = uuid.UUID('6f6e6576-6965-4f73-8000-66657272756d')
_BAYS_PER_ENCLOSURE = 12
_BOOT_ORDER = ['PXE', 'HardDisk', 'CD', 'USB']
_TASK_KEEP = 5000


class ApplianceError(Exception):
    """A synchronous REST error: status, and OneView's error JSON."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = {'errorCode': code, 'message': message, 'details': '',
                     'recommendedActions': [], 'nestedErrors': [],
                     'data': {}}


def make_id(kind: str, number: int | str) -> str:
    return str(uuid.uuid5(_NAMESPACE, '%s-%s' % (kind, number)))


def timestamp() -> str:
    return time.strftime('%Y-%m-%dT%H:%M:%S.000Z', time.gmtime())


def _mac(index: int, port: int) -> str:
    return 'AA:%02X:%02X:%02X:%02X:%02X' % (
        port, (index >> 24) & 0xff, (index >> 16) & 0xff, (index >> 8) & 0xff,
        index & 0xff)


class Appliance:
    """One appliance; every public method takes the lock."""

    def __init__(self, username: str = 'Administrator',
                 password: str = 'ferrum-sim', page_size: int = 500,
                 session_timeout: float = 0.0) -> None:
        self.username, self.password = username, password
        self.default_page_size = page_size
        self.session_timeout = session_timeout
        self.lock = threading.RLock()
        self.requests: dict[str, int] = {}
        self.reset(0)

    # ---- reset and resources -----------------------------------------------

    def reset(self, hardware: int, page_size: int | None = None) -> None:
        with self.lock:
            self.page_size = page_size or self.default_page_size
            self.counters: dict[str, int] = {}
            self.sessions: dict[str, float] = {}
            self.clear_faults()
            self.faults: list[dict[str, Any]] = []
            self.tasks: dict[str, dict[str, Any]] = {}
            self.pending: list[dict[str, Any]] = []
            self.profiles: dict[str, dict[str, Any]] = {}
            self.requests.clear()
            #: Requests a hang_request fault holds right now.
            self.hanging: list[str] = []
            self.types: dict[str, dict[str, Any]] = {}
            self.groups: dict[str, dict[str, Any]] = {}
            for n, (model, name) in enumerate([
                    ('Synergy 480 Gen10', 'SY 480 Gen10 1'),
                    ('ProLiant DL360 Gen10', 'DL360 Gen10 1')]):
                uri = '/rest/server-hardware-types/' + make_id('sht', n)
                self.types[uri] = {
                    'uri': uri, 'name': name, 'model': model,
                    'category': 'server-hardware-types',
                    'type': 'server-hardware-type-7', 'eTag': '1',
                    'bootModes': ['UEFI', 'BIOS'],
                    'bootCapabilities': ['PXE', 'HardDisk', 'CD', 'USB']}
            for n, name in enumerate(['SIM enclosure group',
                                      'SIM other enclosure group']):
                uri = '/rest/enclosure-groups/' + make_id('eg', n)
                self.groups[uri] = {'uri': uri, 'name': name, 'eTag': '1',
                                    'category': 'enclosure-groups',
                                    'type': 'EnclosureGroupV7'}
            sht, other_sht = list(self.types)
            group, other_group = list(self.groups)
            self.templates: dict[str, dict[str, Any]] = {}
            for key, name, tsht, tgroup, mac, manage in [
                    ('compatible', 'SIM template', sht, group, 'Physical',
                     True),
                    ('incompatible', 'SIM other-hardware template',
                     other_sht, other_group, 'Physical', True),
                    ('virtual_mac', 'SIM virtual-MAC template', sht, group,
                     'Virtual', True),
                    ('unmanaged_boot', 'SIM unmanaged-boot template', sht,
                     group, 'Physical', False)]:
                uri = '/rest/server-profile-templates/' + make_id('spt', key)
                self.templates[uri] = {
                    'uri': uri, 'name': name, '_key': key, 'eTag': '1',
                    'type': 'ServerProfileTemplateV5',
                    'category': 'server-profile-templates',
                    'serverHardwareTypeUri': tsht,
                    'enclosureGroupUri': tgroup, 'macType': mac,
                    'wwnType': mac, 'serialNumberType': mac,
                    'boot': {'manageBoot': manage,
                             'order': list(_BOOT_ORDER) if manage else []},
                    'bootMode': {'manageMode': True, 'mode': 'UEFI'},
                    'connectionSettings': {'manageConnections': True,
                                           'connections': []},
                    'serverProfileDescription': 'made by ferrum-sim'}
            self.hardware: dict[str, dict[str, Any]] = {}
            for index in range(hardware):
                self._add_hardware(index, sht, group)

    def _add_hardware(self, index: int, sht: str, group: str) -> None:
        sh_id = make_id('sh', index)
        uri = '/rest/server-hardware/' + sh_id
        enclosure, bay = divmod(index, _BAYS_PER_ENCLOSURE)
        ports = [{'portNumber': p, 'type': 'Ethernet', 'mac': _mac(index, p),
                  'virtualPorts': [{'portFunction': 'a',
                                    'portNumber': p,
                                    'mac': _mac(index, p)}]}
                 for p in (1, 2)]
        self.hardware[uri] = {
            'uri': uri, 'uuid': sh_id, 'name': 'SIM-Encl%d, bay %d' % (
                enclosure + 1, bay + 1),
            'category': 'server-hardware', 'type': 'server-hardware-8',
            'eTag': '1', 'created': timestamp(), 'modified': timestamp(),
            'powerState': 'Off', 'powerLock': False,
            'serverProfileUri': None, 'state': 'NoProfileApplied',
            'status': 'OK', 'serverHardwareTypeUri': sht,
            'serverGroupUri': group, 'model': 'Synergy 480 Gen10',
            'shortModel': 'SY 480 Gen10', 'formFactor': 'HalfHeight',
            'serialNumber': 'SIM%07d' % index, 'position': bay + 1,
            'locationUri': '/rest/enclosures/' + make_id('encl', enclosure),
            'processorCount': 2, 'processorCoreCount': 16,
            'processorSpeedMhz': 2300, 'processorType': 'Intel Xeon Gold',
            'memoryMb': 262144, 'romVersion': 'I42 v2.16',
            'mpModel': 'iLO5', 'mpFirmwareVersion': '2.18',
            'mpHostInfo': {'mpHostName': 'ilo-sim-%d' % index,
                           'mpIpAddresses': [{
                               'address': '10.%d.%d.%d' % (
                                   index >> 16 & 0xff, index >> 8 & 0xff,
                                   index & 0xff),
                               'type': 'Static'}]},
            'portMap': {'deviceSlots': [{
                'deviceName': 'HPE FlexFabric 20Gb 2-port 650FLB',
                'slotNumber': 3, 'location': 'Flb',
                'physicalPorts': ports}]},
        }

    def collection(self, kind: str) -> dict[str, dict[str, Any]]:
        return {'server-hardware': self.hardware,
                'server-profiles': self.profiles,
                'server-profile-templates': self.templates,
                'server-hardware-types': self.types,
                'enclosure-groups': self.groups, 'tasks': self.tasks}[kind]

    def find(self, kind: str, uri: str) -> dict[str, Any]:
        """The live item (call under the lock), or OneView's 404."""
        item = self.collection(kind).get(uri)
        if item is None:
            raise ApplianceError(404, 'RESOURCE_NOT_FOUND',
                                 'Resource not found: %s' % uri)
        return item

    def get(self, kind: str, uri: str) -> dict[str, Any]:
        with self.lock:
            self.settle()
            return public(self.find(kind, uri))

    def list(self, kind: str, start: int, count: int,
             filters: list[str]) -> tuple[list[dict[str, Any]], int, int]:
        """One page: (members, total matching, the page size used)."""
        with self.lock:
            self.settle()
            tests = [_parse_filter(f) for f in filters if f]
            items = [item for item in self.collection(kind).values()
                     if all(test(item) for test in tests)]
            size = self.page_size if count < 0 else min(count,
                                                        self.page_size)
            return (copy.deepcopy(items[start:start + size]), len(items),
                    size)

    # ---- sessions ----------------------------------------------------------

    def login(self, body: Any) -> str:
        if (not isinstance(body, dict) or body.get('userName') != self.username
                or body.get('password') != self.password):
            raise ApplianceError(401, 'AUTHN_AUTH_FAIL',
                                 'Invalid user name or password.')
        token = uuid.uuid4().hex
        with self.lock:
            self.sessions[token] = time.monotonic()
        return token

    def check_session(self, token: str | None) -> None:
        with self.lock:
            used = self.sessions.get(token or '')
            now = time.monotonic()
            if used is not None and self.session_timeout > 0 and (
                    now - used > self.session_timeout):
                del self.sessions[token or '']
                used = None
            if used is None:
                raise ApplianceError(
                    401, 'AUTHORIZATION',
                    'Authorization error: the session is invalid or has '
                    'expired. Log in again.')
            self.sessions[token or ''] = now

    def logout(self, token: str | None) -> None:
        with self.lock:
            self.sessions.pop(token or '', None)

    # ---- faults ------------------------------------------------------------

    def add_fault(self, fault: dict[str, Any]) -> None:
        kind = fault.get('kind')
        with self.lock:
            if kind == 'expire_sessions':
                self.sessions.clear()
            elif kind in ('appliance_down', 'task_error', 'slow_task',
                          'hang_request'):
                if kind in ('slow_task', 'hang_request'):
                    float(fault['seconds'])
                if kind == 'appliance_down' and fault.get('mode') == 'reset':
                    fault['until'] = time.monotonic() + float(
                        fault.get('seconds', 5))
                self.faults.append(dict(fault))
            else:
                raise ApplianceError(400, 'INVALID_FAULT',
                                     'unknown fault kind %r' % kind)

    def fault(self, kind: str, target: str = '') -> dict[str, Any] | None:
        """The first active fault of ``kind`` whose ``match`` is in target."""
        with self.lock:
            now = time.monotonic()
            self.faults = [f for f in self.faults
                           if f.get('until', now + 1) > now
                           and f.get('count', 1) > 0]
            for fault in self.faults:
                if fault['kind'] == kind and fault.get('match', '') in target:
                    return fault
            return None

    def clear_faults(self) -> None:
        with self.lock:
            for fault in getattr(self, 'faults', []):
                fault['_cleared'] = True  # ends the holds of hang_request
            self.faults = []

    def hang(self, request: str) -> bool:
        """Hold ``request`` ("METHOD /path") while a ``hang_request`` fault
        matches it, up to its ``seconds``; True when it was held (it is
        then answered 503 without being acted on, as by an appliance that
        hung and dropped the work). Clearing the faults ends the hold."""
        with self.lock:
            fault = self.fault('hang_request', request)
            if fault is None:
                return False
            if 'count' in fault:
                fault['count'] -= 1
            until = time.monotonic() + float(fault['seconds'])
            self.hanging.append(request)
        try:
            while time.monotonic() < until:
                if fault.get('_cleared'):
                    break
                time.sleep(0.02)
        finally:
            with self.lock:
                self.hanging.remove(request)
        return True

    # ---- tasks -------------------------------------------------------------

    def new_id(self, kind: str) -> str:
        self.counters[kind] = self.counters.get(kind, 0) + 1
        return make_id(kind, self.counters[kind])

    def start_task(self, name: str, resource: dict[str, Any],
                   done: Callable[[], None],
                   undo: Callable[[], None] = lambda: None,
                   error: tuple[str, str] | None = None) -> dict[str, Any]:
        """A task on ``resource``; ``done`` runs if it completes, else undo.

        Faults are looked up against the resource URI and the task name.
        """
        target = '%s %s' % (name, resource['uri'])
        failing = self.fault('task_error', target)
        if error is None and failing is not None:
            if 'count' in failing:
                failing['count'] -= 1
            error = (failing.get('error_code', 'SIMULATED_TASK_ERROR'),
                     failing.get('message', 'Simulated task failure (%s)'
                                 % target))
        slow = self.fault('slow_task', target)
        task_uri = '/rest/tasks/' + self.new_id('task')
        task = {
            'uri': task_uri, 'category': 'tasks', 'type': 'TaskResourceV2',
            'name': name, 'owner': self.username, 'created': timestamp(),
            'modified': timestamp(), 'taskState': 'Running',
            'taskStatus': name + ' in progress', 'percentComplete': 0,
            'computedPercentComplete': 0, 'taskErrors': [],
            'associatedResource': {
                'resourceUri': resource['uri'],
                'resourceName': resource.get('name', ''),
                'resourceCategory': resource.get('category', ''),
                'associationType': 'MANAGED_BY'},
            '_finish_at': time.monotonic() + (
                float(slow['seconds']) if slow else 0.0),
            '_done': done, '_undo': undo, '_error': error}
        self.tasks[task_uri] = task
        self.pending.append(task)
        if len(self.tasks) > _TASK_KEEP:
            for old in list(self.tasks)[:len(self.tasks) - _TASK_KEEP]:
                if self.tasks[old]['taskState'] != 'Running':
                    del self.tasks[old]
        self.settle()
        return task

    def settle(self) -> None:
        """Finish every task that is due (called under the lock)."""
        if not self.pending:
            return
        now = time.monotonic()
        due = [t for t in self.pending if t['_finish_at'] <= now]
        if not due:
            return
        self.pending = [t for t in self.pending if t['_finish_at'] > now]
        for task in due:
            task['modified'] = timestamp()
            task['percentComplete'] = task['computedPercentComplete'] = 100
            if task['_error']:
                code, message = task['_error']
                task['_undo']()
                task['taskState'], task['taskStatus'] = 'Error', message
                task['taskErrors'] = [{'errorCode': code,
                                       'message': message, 'details': '',
                                       'recommendedActions': [],
                                       'nestedErrors': [], 'data': {}}]
            else:
                task['_done']()
                task['taskState'] = 'Completed'
                task['taskStatus'] = task['name'] + ' completed'



def public(item: dict[str, Any]) -> dict[str, Any]:
    """A copy without the simulator's private keys (leading underscore)."""
    return {k: copy.deepcopy(v) for k, v in item.items()
            if not k.startswith('_')}


# ---- filters -----------------------------------------------------------

_CLAUSE = re.compile(
    r"""^\s*(?P<field>[A-Za-z_][\w.]*)\s*(?P<op>=|<>|!=|\s+matches\s+)\s*
    (?:'(?P<sq>[^']*)'|"(?P<dq>[^"]*)"|(?P<bare>\S+))\s*$""",
    re.IGNORECASE | re.VERBOSE)


def _lookup(item: dict[str, Any], field: str) -> Any:
    value: Any = item
    for part in field.split('.'):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _parse_filter(text: str) -> Callable[[dict[str, Any]], bool]:
    """OneView's ``"field='value'"`` filters, ANDed; =, <>, matches, null."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    tests = []
    for clause in re.split(r'\s+AND\s+', text, flags=re.IGNORECASE):
        found = _CLAUSE.match(clause)
        if found is None:
            raise ApplianceError(400, 'INVALID_FILTER',
                                 'Cannot parse the filter %r' % text)
        field, op = found['field'], found['op'].strip().lower()
        bare = found['bare']
        value = found['sq'] if found['sq'] is not None else found['dq']
        if value is None:
            value = None if bare is not None and bare.lower() == 'null' \
                else bare
        tests.append(_clause_test(field, op, value))
    return lambda item: all(test(item) for test in tests)


def _clause_test(field: str, op: str, value: str | None
                 ) -> Callable[[dict[str, Any]], bool]:
    def equal(item: dict[str, Any]) -> bool:
        actual = _lookup(item, field)
        if value is None:
            return actual in (None, '')
        if isinstance(actual, bool):
            return str(actual).lower() == value.lower()
        return actual is not None and str(actual) == value

    if op == 'matches':
        pattern = (value or '').replace('%', '*')
        return lambda item: fnmatch.fnmatchcase(
            str(_lookup(item, field) or '').lower(), pattern.lower())
    if op in ('<>', '!='):
        return lambda item: not equal(item)
    return equal
