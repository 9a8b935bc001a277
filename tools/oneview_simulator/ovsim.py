#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A simulated HPE OneView appliance over HTTPS, for the real hpOneView client.

Serves the ``/rest`` calls python-hpOneView 5.3.0 makes for server
hardware, server profiles and their templates, plus unauthenticated
``/admin`` endpoints that steer it (reset, take/free a server, faults,
request counts). See README.md.

    ovsim.py --port 0 --hardware 16 --cert-dir /tmp/ovsim

prints ``READY 127.0.0.1:<port> <ca file>`` once it listens.
"""

import argparse
import http.server
import json
import os
import pathlib
import re
import signal
import socket
import ssl
import struct
import sys
import tempfile
import traceback
import urllib.parse
from collections.abc import Callable
from typing import Any

import appliance
import servers
from appliance import Appliance
from appliance import ApplianceError

API_VERSION = {'currentVersion': 2000, 'minimumVersion': 120}
_KINDS = ('server-hardware', 'server-profiles', 'server-profile-templates',
          'server-hardware-types', 'enclosure-groups')
_ID = '[^/]+'


class Reply:
    """What a route answers: a status, a JSON body, maybe a task."""

    def __init__(self, body: Any = None, status: int = 200,
                 task: bool = False) -> None:
        self.body, self.status, self.task = body, status, task


def _task(task: dict[str, Any]) -> Reply:
    return Reply(appliance.public(task), 202, task=True)


def _listing(app: Appliance, kind: str, path: str,
             query: dict[str, list[str]]) -> Reply:
    def number(name: str, default: int) -> int:
        try:
            return int(query.get(name, [str(default)])[0])
        except ValueError:
            raise ApplianceError(400, 'INVALID_QUERY',
                                 '%s must be an integer' % name) from None

    start, count = max(number('start', 0), 0), number('count', -1)
    members, total, size = app.list(kind, start, count,
                                    query.get('filter', []))
    rest = [(k, v) for k, values in query.items() for v in values
            if k not in ('start', 'count')]

    def page(first: int) -> str:
        params = [('start', str(first)), ('count', str(count))] + rest
        return path + '?' + urllib.parse.urlencode(
            params, quote_via=urllib.parse.quote)

    following = start + len(members)
    return Reply({
        'type': kind + '-list', 'category': kind, 'members': members,
        'start': start, 'count': len(members), 'total': total,
        'uri': page(start),
        'nextPageUri': page(following) if following < total else None,
        'prevPageUri': page(max(start - size, 0)) if start else None})


def routes(app: Appliance) -> list[tuple[str, str, Callable[..., Reply]]]:
    """(method, path template, handler(match, query, body, token))."""
    def admin_reset(m: Any, q: Any, body: Any, t: Any) -> Reply:
        body = body or {}
        app.reset(int(body.get('hardware', 0)), body.get('page_size'))
        return Reply(servers.state(app))

    def admin_fault(m: Any, q: Any, body: Any, t: Any) -> Reply:
        if not isinstance(body, dict):
            raise ApplianceError(400, 'INVALID_FAULT', 'a JSON object')
        app.add_fault(body)
        return Reply({'faults': servers.state(app)['faults']})

    def admin_clear(m: Any, q: Any, b: Any, t: Any) -> Reply:
        app.clear_faults()
        return Reply(status=204)

    def admin_zero(m: Any, q: Any, b: Any, t: Any) -> Reply:
        with app.lock:
            app.requests.clear()
        return Reply(status=204)

    def admin_requests(m: Any, q: Any, b: Any, t: Any) -> Reply:
        with app.lock:
            counts = dict(app.requests)
        return Reply({'total': sum(counts.values()), 'requests': counts})

    def login(m: Any, q: Any, body: Any, t: Any) -> Reply:
        return Reply({'sessionID': app.login(body),
                      'partnerData': {}})

    def relogin(m: Any, q: Any, body: Any, token: Any) -> Reply:
        app.check_session(token)
        return Reply({'sessionID': token, 'partnerData': {}})

    def logout(m: Any, q: Any, body: Any, token: Any) -> Reply:
        app.logout(token)
        return Reply(status=204)

    table: list[tuple[str, str, Callable[..., Reply]]] = [
        ('POST', '/admin/reset', admin_reset),
        ('GET', '/admin/state', lambda *a: Reply(servers.state(app))),
        ('POST', '/admin/server-hardware/{id}/take',
         lambda m, *a: Reply(servers.take(
             app, '/rest/server-hardware/' + m[1]))),
        ('POST', '/admin/server-hardware/{id}/free',
         lambda m, *a: Reply(servers.free(
             app, '/rest/server-hardware/' + m[1]))),
        ('GET', '/admin/faults',
         lambda *a: Reply({'faults': servers.state(app)['faults']})),
        ('POST', '/admin/faults', admin_fault),
        ('DELETE', '/admin/faults', admin_clear),
        ('GET', '/admin/requests', admin_requests),
        ('DELETE', '/admin/requests', admin_zero),
        ('GET', '/rest/version', lambda *a: Reply(API_VERSION)),
        ('POST', '/rest/login-sessions', login),
        ('PUT', '/rest/login-sessions', relogin),
        ('DELETE', '/rest/login-sessions', logout),
        ('GET', '/rest/tasks/{id}',
         lambda m, *a: Reply(app.get('tasks', m[0]))),
        ('PUT', '/rest/server-hardware/{id}/powerState',
         lambda m, q, body, t: _task(servers.set_power(
             app, m[0].rsplit('/', 1)[0], body))),
        ('GET', '/rest/server-profile-templates/{id}/new-profile',
         lambda m, *a: Reply(servers.new_profile(
             app, m[0].rsplit('/', 1)[0]))),
        ('POST', '/rest/server-profiles',
         lambda m, q, body, t: _task(servers.create_profile(app, body))),
        ('PUT', '/rest/server-profiles/{id}',
         lambda m, q, body, t: _task(servers.update_profile(
             app, m[0], body))),
        ('DELETE', '/rest/server-profiles/{id}',
         lambda m, *a: _task(servers.delete_profile(app, m[0]))),
    ]
    for kind in _KINDS:
        table += [
            ('GET', '/rest/%s' % kind,
             lambda m, q, *a, kind=kind: _listing(app, kind, m[0], q)),
            ('GET', '/rest/%s/{id}' % kind,
             lambda m, *a, kind=kind: Reply(app.get(kind, m[0])))]
    return table


class Handler(http.server.BaseHTTPRequestHandler):
    """Routes one request; every answer has a body and Content-Length.

    NOTE: hpOneView retries a connection closed without a status line
    forever, so no path may end without a response.
    """

    protocol_version = 'HTTP/1.1'
    server: 'Server'

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def _serve(self) -> None:
        app = self.server.app
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        length = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(length) if length else b''
        route, match, handler = self.server.route(self.command, url.path)
        try:
            if url.path.startswith('/rest'):
                with app.lock:
                    app.requests[route] = app.requests.get(route, 0) + 1
                if app.fault('appliance_down') is not None or app.hang(
                        '%s %s' % (self.command, url.path)):
                    raise ApplianceError(
                        503, 'SERVICE_UNAVAILABLE',
                        'The appliance is not available (simulated).')
            if handler is None or match is None:
                raise ApplianceError(404, 'RESOURCE_NOT_FOUND',
                                     'No such resource: %s %s' % (
                                         self.command, url.path))
            token = self.headers.get('auth')
            if url.path.startswith('/rest') and route not in (
                    'GET /rest/version', 'POST /rest/login-sessions'):
                app.check_session(token)
            try:
                body = json.loads(raw) if raw.strip() else None
            except ValueError:
                raise ApplianceError(400, 'INVALID_JSON',
                                     'The request body is not JSON.') from None
            reply = handler(match, query, body, token)
        except ApplianceError as error:
            reply = Reply(error.body, error.status)
        except (KeyError, TypeError, ValueError) as error:
            reply = Reply(ApplianceError(400, 'INVALID_REQUEST',
                                         repr(error)).body, 400)
        except Exception as error:  # a simulator bug: still answer
            traceback.print_exc()
            reply = Reply(ApplianceError(500, 'INTERNAL_ERROR',
                                         repr(error)).body, 500)
        self._answer(reply)

    def _answer(self, reply: Reply) -> None:
        data = b'' if reply.status == 204 else json.dumps(
            reply.body).encode()
        self.send_response(reply.status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        if reply.task:
            self.send_header('Location', reply.body['uri'])
        self.end_headers()
        self.wfile.write(data)


class Server(http.server.ThreadingHTTPServer):
    """Thread per connection; TLS is negotiated in that thread, not accept."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], app: Appliance,
                 context: ssl.SSLContext, verbose: bool = False) -> None:
        super().__init__(address, Handler)
        self.app, self.context, self.verbose = app, context, verbose
        self.table = [(method, re.compile(
            '^' + template.replace('{id}', '(%s)' % _ID) + '$'),
            '%s %s' % (method, template), handler)
            for method, template, handler in routes(app)]

    def route(self, method: str, path: str
              ) -> tuple[str, list[str] | None, Callable[..., Reply] | None]:
        """(route name for counting, [path, ids...], handler)."""
        for m, pattern, name, handler in self.table:
            found = pattern.match(path)
            if found and m == method:
                return name, [path, *found.groups()], handler
        return '%s (unknown)' % method, None, None

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.app.fault('appliance_down') is not None and any(
                f.get('mode') == 'reset' for f in self.app.faults):
            # RST before the TLS handshake: the client gets a prompt
            # ConnectionResetError or SSLError, never a bad status line.
            request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                               struct.pack('ii', 1, 0))
            request.close()
            return
        # The status line and the body go in two writes: without NODELAY,
        # Nagle holds the body until the client's delayed ACK (40 ms).
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            request = self.context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            request.close()
            return
        super().finish_request(request, client_address)


def make_context(cert_dir: pathlib.Path) -> tuple[ssl.SSLContext, str]:
    """A server TLS context from a fresh trustme CA; the CA file's path."""
    import trustme
    ca = trustme.CA(organization_name='ferrum OneView simulator')
    cert = ca.issue_cert('127.0.0.1', 'localhost', '::1')
    ca_file = cert_dir / 'ca.pem'
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    cert.configure_cert(context)
    return context, str(ca_file)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--address', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=0,
                        help='0 picks a free port')
    parser.add_argument('--hardware', type=int, default=8,
                        help='server hardware to create at start')
    parser.add_argument('--cert-dir', help='CA file goes here '
                        '(default: a new temporary directory)')
    parser.add_argument('--port-file',
                        help='also write "<address>:<port>" to this file')
    parser.add_argument('--username', default='Administrator')
    parser.add_argument('--password', default='ferrum-sim')
    parser.add_argument('--page-size', type=int, default=500,
                        help='members per list page at most')
    parser.add_argument('--session-timeout', type=float, default=0.0,
                        help='idle seconds before a session expires '
                        '(0: never)')
    parser.add_argument('--verbose', action='store_true',
                        help='log every request on stderr')
    args = parser.parse_args(argv)
    cert_dir = pathlib.Path(args.cert_dir or tempfile.mkdtemp(
        prefix='ovsim-'))
    cert_dir.mkdir(parents=True, exist_ok=True)
    context, ca_file = make_context(cert_dir)
    app = Appliance(args.username, args.password, args.page_size,
                    args.session_timeout)
    app.reset(args.hardware)
    server = Server((args.address, args.port), app, context, args.verbose)
    bound = '%s:%d' % (args.address, server.server_address[1])
    if args.port_file:
        with open(args.port_file + '.tmp', 'w') as out:
            out.write(bound + '\n')
        os.replace(args.port_file + '.tmp', args.port_file)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    print('READY %s %s' % (bound, ca_file), flush=True)
    server.serve_forever(poll_interval=0.2)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
