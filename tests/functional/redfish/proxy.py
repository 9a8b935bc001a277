# SPDX-License-Identifier: Apache-2.0
"""A recording proxy in front of the real sushy-emulator, which can turn an
operation's answer into a task monitor.

``Proxy(upstream)``: ``start()``, ``stop()``, ``url``. Every request is
forwarded to the emulator (which does the work) and recorded in ``seen``
(:class:`Seen`: method, path, JSON body), so a test can assert what reached
the BMC. ``answer_with_task(method, path, script)`` makes the proxy answer
that request, once the emulator accepted it, with 202 and the ``Location``
of a task monitor it serves itself, which answers as :class:`Script` says:
running for some reads, then completed, an exception with messages, an
error answer, gone (404), or never done; with ``Retry-After`` when asked.
The emulator cannot do this: its only Task is always completed.
``outage = True`` makes every answer a 503, as a BMC that is restarting;
``ignore(method, path)`` acknowledges a request without passing it on.
"""

import dataclasses
import http.server
import itertools
import json
import threading
from typing import Any

import requests

#: Headers passed on in either direction.
_REQUEST_HEADERS = ('Authorization', 'Content-Type', 'Accept', 'If-Match',
                    'X-Auth-Token')
_ANSWER_HEADERS = ('Content-Type', 'Location', 'ETag', 'Allow',
                   'Retry-After', 'WWW-Authenticate')
MONITORS = '/proxy/taskmon/'


@dataclasses.dataclass(frozen=True)
class Seen:
    method: str
    path: str
    body: Any


@dataclasses.dataclass
class Script:
    """How a task monitor answers.

    ``running``: reads answered 202 (Task ``Running``) before the end.
    ``end``: ``completed`` (200, Task Completed/``status``), ``exception``
    (200, Task Exception/Critical with ``messages``), ``refused`` (400, a
    Redfish error with ``messages``), ``gone`` (404) or ``never`` (202 for
    ever). ``retry_after``: the header of each 202.
    ``location``: send the client to this URI instead (served upstream).
    ``hold``: keep the 202 until this event is set (up to 60 s), so that a
    test can kill the client while the BMC has done the work unanswered.
    """

    running: int = 0
    end: str = 'completed'
    status: str = 'OK'
    messages: tuple[str, ...] = ()
    retry_after: int | None = None
    location: str | None = None
    hold: threading.Event | None = None
    reads: int = 0


def _task(ident: str, state: str, status: str,
          messages: tuple[str, ...]) -> dict[str, Any]:
    return {'@odata.type': '#Task.v1_4_3.Task', 'Id': ident,
            'Name': 'Task %s' % ident, 'TaskState': state,
            'TaskStatus': status,
            'Messages': [{'MessageId': 'Base.1.8.GeneralError',
                          'Message': text} for text in messages]}


class Proxy:

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip('/')
        self.seen: list[Seen] = []
        self.tasks: dict[str, Script] = {}
        self.outage = False
        self._scripts: dict[tuple[str, str], Script] = {}
        self._ignored: set[tuple[str, str]] = set()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return 'http://127.0.0.1:%d' % self._server.server_address[1]

    def answer_with_task(self, method: str, path: str,
                         script: Script) -> Script:
        """Answer the next ``method path`` the emulator accepts with 202."""
        with self._lock:
            self._scripts[(method, path)] = script
        return script

    def ignore(self, method: str, path: str) -> None:
        """Answer ``method path`` with 204 without passing it on: a BMC
        that acknowledges a change and keeps its old value."""
        with self._lock:
            self._ignored.add((method, path))

    def requests_to(self, method: str, path: str) -> list[Seen]:
        with self._lock:
            return [seen for seen in self.seen
                    if (seen.method, seen.path) == (method, path)]

    def start(self) -> 'Proxy':
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _any

        self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                       Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True, name='redfish-proxy')
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # ---- serving ------------------------------------------------------------

    def _handle(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get('Content-Length') or 0)
        raw = handler.rfile.read(length) if length else b''
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors='replace')
        path = handler.path.split('?', 1)[0]
        with self._lock:
            self.seen.append(Seen(handler.command, path, body))
            script = self._scripts.get((handler.command, path))
            task = self.tasks.get(path)
            ignored = (handler.command, path) in self._ignored
        if ignored:
            return self._answer(handler, 204, None)
        if self.outage:
            return self._answer(handler, 503, {'error': {
                'message': 'The BMC is restarting'}})
        if task is not None:
            return self._monitor(handler, path, task)
        upstream = requests.request(
            handler.command, self.upstream + handler.path, data=raw or None,
            headers={name: handler.headers[name] for name in _REQUEST_HEADERS
                     if handler.headers.get(name)},
            allow_redirects=False, timeout=60)
        if script is not None and upstream.status_code < 300:
            with self._lock:
                self._scripts.pop((handler.command, path), None)
                monitor = script.location or '%s%d' % (MONITORS,
                                                       next(self._ids))
                self.tasks[monitor] = script
            if script.hold is not None:
                script.hold.wait(60)
            return self._answer(handler, 202, None, {'Location': monitor})
        headers = {name: upstream.headers[name] for name in _ANSWER_HEADERS
                   if name in upstream.headers}
        self._send(handler, upstream.status_code, upstream.content, headers)

    def _monitor(self, handler: http.server.BaseHTTPRequestHandler,
                 path: str, script: Script) -> None:
        with self._lock:
            script.reads += 1
            reads = script.reads
        if script.location:  # the emulator's own Task answers
            upstream = requests.get(self.upstream + path, timeout=60,
                                    headers={'Authorization': handler.headers[
                                        'Authorization'] or ''})
            return self._send(handler, upstream.status_code,
                              upstream.content,
                              {'Content-Type': 'application/json'})
        ident = path.rsplit('/', 1)[-1]
        if reads <= script.running or script.end == 'never':
            headers = ({'Retry-After': str(script.retry_after)}
                       if script.retry_after is not None else {})
            return self._answer(handler, 202, _task(
                ident, 'Running', 'OK', ()), headers)
        if script.end == 'gone':
            return self._answer(handler, 404, {'error': {
                'message': 'No task monitor %s' % path}})
        if script.end == 'refused':  # the operation's own error answer
            return self._answer(handler, 400, {'error': {
                'code': 'Base.1.8.GeneralError',
                'message': 'A general error has occurred.',
                '@Message.ExtendedInfo': [{'Message': text}
                                          for text in script.messages]}})
        if script.end == 'exception':
            return self._answer(handler, 200, _task(
                ident, 'Exception', 'Critical', script.messages))
        return self._answer(handler, 200, _task(
            ident, 'Completed', script.status, script.messages))

    def _answer(self, handler: http.server.BaseHTTPRequestHandler,
                status: int, doc: Any,
                headers: dict[str, str] | None = None) -> None:
        content = json.dumps(doc).encode() if doc is not None else b''
        self._send(handler, status, content, dict(
            {'Content-Type': 'application/json'} if content else {},
            **(headers or {})))

    @staticmethod
    def _send(handler: http.server.BaseHTTPRequestHandler, status: int,
              content: bytes, headers: dict[str, str]) -> None:
        try:
            handler.send_response(status)
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.send_header('Content-Length', str(len(content)))
            handler.end_headers()
            if content and handler.command != 'HEAD':
                handler.wfile.write(content)
        except OSError:
            pass  # the client went away (killed): nobody to answer
