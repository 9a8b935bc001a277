# SPDX-License-Identifier: Apache-2.0
"""A small Redfish BMC on loopback that counts what it is asked.

The real emulator has no SessionService and answers at its own pace, so
what sessions and timing do to the client (logins, logouts, listings, a
slow read) is tested against this instead: one System (``/redfish/v1/
Systems/1``), a SessionService with X-Auth-Token sessions, and HTTP Basic
for the same account. Its power state changes only when a test sets
``power_state``: a reset is recorded, never applied.

``FakeBMC()``: ``start()``, ``stop()``, ``url``, ``driver_info(**extra)``,
``count(what)`` for ``login asked`` (before the gate), ``login``,
``logout asked`` (before its gate), ``logout``, ``list`` (Systems listed),
``read`` (System read) and ``reset``; ``resets`` (the reset types, in
order); ``on_read`` (called at each System read, e.g. to move a test
clock); ``login_gate`` and ``logout_gate`` (threading.Events a login or a
logout waits for, so that concurrent ones overlap).
"""

import base64
import collections
import http.server
import itertools
import json
import threading
from collections.abc import Callable
from typing import Any

USERNAME, PASSWORD = 'operator', 'fake-bmc-pw-7'
_SESSIONS = '/redfish/v1/SessionService/Sessions'
_SYSTEM = '/redfish/v1/Systems/1'
_RESET = _SYSTEM + '/Actions/ComputerSystem.Reset'


class FakeBMC:

    def __init__(self) -> None:
        self.power_state = 'Off'
        self.resets: list[str] = []
        self.on_read: Callable[[], None] = lambda: None
        self.login_gate = threading.Event()
        self.login_gate.set()
        self.logout_gate = threading.Event()
        self.logout_gate.set()
        self._counts: collections.Counter[str] = collections.Counter()
        self._tokens: dict[str, str] = {}  # token -> session path
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(
            ('127.0.0.1', 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True)

    @property
    def url(self) -> str:
        return 'http://127.0.0.1:%d' % self._server.server_address[1]

    def driver_info(self, **extra: Any) -> dict[str, Any]:
        return dict({'redfish_address': self.url,
                     'redfish_system_id': '1', 'redfish_username': USERNAME,
                     'redfish_password': PASSWORD,
                     'redfish_auth_type': 'session'}, **extra)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def count(self, what: str) -> int:
        with self._lock:
            return self._counts[what]

    def _note(self, what: str) -> None:
        with self._lock:
            self._counts[what] += 1

    def _authorized(self, headers: Any) -> bool:
        with self._lock:
            if headers.get('X-Auth-Token') in self._tokens:
                return True
        expected = 'Basic ' + base64.b64encode(
            ('%s:%s' % (USERNAME, PASSWORD)).encode()).decode()
        return bool(headers.get('Authorization') == expected)

    def _document(self, path: str) -> dict[str, Any] | None:
        if path == '/redfish/v1':
            return {'@odata.id': '/redfish/v1/', 'Id': 'RootService',
                    'RedfishVersion': '1.6.0',
                    'Systems': {'@odata.id': '/redfish/v1/Systems'},
                    'SessionService': {
                        '@odata.id': '/redfish/v1/SessionService'},
                    'Links': {'Sessions': {'@odata.id': _SESSIONS}}}
        if path == '/redfish/v1/Systems':
            self._note('list')
            return {'@odata.id': path, 'Members@odata.count': 1,
                    'Members': [{'@odata.id': _SYSTEM}]}
        if path == _SYSTEM:
            self._note('read')
            self.on_read()
            return {'@odata.id': _SYSTEM, 'Id': '1',
                    'PowerState': self.power_state,
                    'Actions': {'#ComputerSystem.Reset': {
                        'target': _RESET,
                        'ResetType@Redfish.AllowableValues': [
                            'On', 'ForceOff', 'GracefulShutdown',
                            'GracefulRestart', 'ForceRestart']}}}
        return None

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        bmc = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def _answer(self, status: int, body: Any = None,
                        headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(body).encode() if body is not None else b''
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(raw)))
                # sushy asks for it; said back, so that the client never
                # reuses a connection the server is about to close.
                self.send_header('Connection', 'close')
                self.close_connection = True
                self.end_headers()
                self.wfile.write(raw)

            def _body(self) -> Any:
                length = int(self.headers.get('Content-Length') or 0)
                return json.loads(self.rfile.read(length) or b'null')

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                path = self.path.rstrip('/')
                if path != '/redfish/v1' and not bmc._authorized(
                        self.headers):
                    self._answer(401, {'error': {'message': 'no'}})
                    return
                document = bmc._document(path)
                self._answer(404 if document is None else 200, document)

            def do_POST(self) -> None:  # noqa: N802
                body = self._body()
                if self.path == _SESSIONS:
                    bmc._note('login asked')
                    bmc.login_gate.wait(60)
                    bmc._note('login')
                    if (body.get('UserName'), body.get('Password')) != (
                            USERNAME, PASSWORD):
                        self._answer(401, {'error': {'message': 'no'}})
                        return
                    token = 'token-%d' % next(bmc._ids)
                    where = '%s/%s' % (_SESSIONS, token)
                    with bmc._lock:
                        bmc._tokens[token] = where
                    self._answer(201, {'@odata.id': where},
                                 {'X-Auth-Token': token, 'Location': where})
                elif self.path == _RESET and bmc._authorized(self.headers):
                    bmc._note('reset')
                    bmc.resets.append(body['ResetType'])
                    self._answer(204)
                else:
                    self._answer(401 if self.path == _RESET else 404)

            def do_DELETE(self) -> None:  # noqa: N802
                bmc._note('logout asked')
                bmc.logout_gate.wait(60)
                with bmc._lock:
                    known = [t for t, where in bmc._tokens.items()
                             if where == self.path]
                    for token in known:
                        del bmc._tokens[token]
                if known:
                    bmc._note('logout')
                self._answer(204 if known else 404)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
