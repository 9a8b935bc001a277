# SPDX-License-Identifier: Apache-2.0
"""The smallest Ironic API an agent boots against, for tests of the
sandbox without ferrum: version discovery, lookup and heartbeat.

``GET /`` advertises 1.68, so the agent turns auto-TLS on; ``GET
/v1/lookup`` answers for the machine's MAC with its node and a fresh
token (``"******"`` afterwards, as Ironic does); ``POST
/v1/heartbeat/<uuid>`` answers 202 and records the body.
"""

import http.server
import json
import secrets
import threading
import urllib.parse
import uuid
from typing import Any

from tests.process import free_port


class _Handler(http.server.BaseHTTPRequestHandler):
    server: '_Server'

    def _send(self, code: int, body: Any = None) -> None:
        data = b'' if body is None else json.dumps(body).encode()
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        stub = self.server.stub
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        stub.record('GET', url.path, query, None, self.headers)
        if url.path in ('/', ''):
            version = {'id': 'v1', 'version': stub.version,
                       'min_version': '1.1', 'status': 'CURRENT'}
            self._send(200, {'default_version': version,
                             'versions': [version], 'name': 'stub'})
        elif url.path == '/v1/lookup':
            addresses = ','.join(query.get('addresses', [''])).split(',')
            if stub.mac not in addresses:
                self._send(404, {'error_message': 'no such node'})
                return
            self._send(200, stub.lookup_body())
        else:
            self._send(404, {'error_message': 'not found'})

    def do_POST(self) -> None:
        stub = self.server.stub
        length = int(self.headers.get('Content-Length') or 0)
        body = json.loads(self.rfile.read(length) or b'{}')
        stub.record('POST', self.path, {}, body, self.headers)
        if self.path == '/v1/heartbeat/%s' % stub.node_uuid:
            with stub.lock:
                stub.heartbeats.append(body)
            self._send(202)
        else:
            self._send(404, {'error_message': 'not found'})

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    stub: 'StubIronic'


class StubIronic:
    """A stub API for one machine, on a free port of 127.0.0.1."""

    def __init__(self, mac: str, disk: str, version: str = '1.68',
                 heartbeat_timeout: int = 10) -> None:
        self.mac = mac
        self.disk = disk
        self.version = version
        self.heartbeat_timeout = heartbeat_timeout
        self.node_uuid = str(uuid.uuid4())
        self.token = secrets.token_urlsafe()  # 43 characters, as Ironic's
        self.token_issued = False
        self.lock = threading.Lock()
        self.heartbeats: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.port = free_port()
        self._server = _Server(('127.0.0.1', self.port), _Handler)
        self._server.stub = self
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True)

    @property
    def url(self) -> str:
        """The API's URL, for the machine's spec."""
        return 'http://127.0.0.1:%d' % self.port

    def record(self, method: str, path: str, query: dict[str, list[str]],
               body: Any, headers: Any) -> None:
        with self.lock:
            self.requests.append({
                'method': method, 'path': path, 'query': query, 'body': body,
                'version': headers.get('X-OpenStack-Ironic-API-Version')})

    def lookup_body(self) -> dict[str, Any]:
        """The lookup answer: the token the first time, then masked."""
        with self.lock:
            token = '******' if self.token_issued else self.token
            self.token_issued = True
        return {'node': {'uuid': self.node_uuid,
                         'properties': {'root_device': {'name': self.disk}},
                         'instance_info': {}, 'driver_internal_info': {}},
                'config': {'heartbeat_timeout': self.heartbeat_timeout,
                           'agent_token': token,
                           'agent_token_required': True}}

    def __enter__(self) -> 'StubIronic':
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
