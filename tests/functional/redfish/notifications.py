# SPDX-License-Identifier: Apache-2.0
"""A loopback HTTP receiver for the emulator's change notifications.

With ``external_notifier`` on, sushy-emulator's fake driver PUTs the whole
System to ``EXTERNAL_NOTIFICATION_URL`` each time it changes it. A reset
shows there as the System's ``pending_power``: ``On``, ``Off`` (ForceOff
and GracefulShutdown alike), or the restart asked for, ``ForceRestart`` or
``GracefulRestart``. So a test sees which resets reached the BMC, whatever
the power state looks like afterwards.
"""

import http.server
import json
import threading
from typing import Any


class Notifications:
    """Every System document PUT to :attr:`url`, in arrival order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._received: list[dict[str, Any]] = []
        received, lock = self._received, self._lock

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_PUT(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers['Content-Length']))
                with lock:
                    received.append(json.loads(body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass  # the test output stays quiet

        self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                       Handler)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True)

    @property
    def url(self) -> str:
        return 'http://127.0.0.1:%d/' % self._server.server_address[1]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def documents(self, uuid: str) -> list[dict[str, Any]]:
        """Every System document received for ``uuid``, in order."""
        with self._lock:
            return [doc for doc in self._received if doc.get('uuid') == uuid]

    def resets(self, uuid: str) -> list[str]:
        """The resets the emulator accepted for System ``uuid``, in order
        (each pending power change, once)."""
        pending = [doc.get('pending_power') or {}
                   for doc in self.documents(uuid)]
        seen: list[str] = []
        last: tuple[Any, Any] = (None, None)
        for change in pending:
            # A change is sent when it is asked (with the time it will
            # apply), again whenever anything else of the System changes
            # meanwhile, and once more, as none, when it applies.
            key = (change.get('power_state'), change.get('apply_time'))
            if key[0] and key != last:
                seen.append(key[0])
            last = key
        return seen
