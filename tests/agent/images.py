# SPDX-License-Identifier: Apache-2.0
"""Disk images for the agent to write, and a web server to fetch them.

:func:`make_images` builds a whole-disk raw image (an MBR label from
``sfdisk`` with one ext4 partition from ``mkfs.ext4 -d``) and its qcow2
copy; :class:`ImageServer` serves a folder on 127.0.0.1 and records what
was fetched.
"""

import contextlib
import dataclasses
import hashlib
import http.server
import os
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

MIB = 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Images:
    """The images made by :func:`make_images`."""

    raw: str
    qcow2: str
    #: sha256 of each file; the raw file is also the content the disk
    #: holds after either is written.
    raw_sha256: str
    qcow2_sha256: str
    #: the raw image's length: compare that many bytes of the disk.
    size: int
    #: the MBR disk identifier, as IPA reports a whole disk's root "uuid".
    disk_id: str

    @property
    def content_sha256(self) -> str:
        """sha256 of the bytes either image puts on the disk."""
        return self.raw_sha256


def sha256_file(path: str) -> str:
    """The hex sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, 'rb') as source:
        for block in iter(lambda: source.read(MIB), b''):
            digest.update(block)
    return digest.hexdigest()


def make_images(directory: str, size_mib: int = 24) -> Images:
    """``disk.raw`` and ``disk.qcow2`` in ``directory``."""
    os.makedirs(directory, exist_ok=True)
    raw = os.path.join(directory, 'disk.raw')
    qcow2 = os.path.join(directory, 'disk.qcow2')
    tree = os.path.join(directory, 'rootfs')
    os.makedirs(os.path.join(tree, 'etc'), exist_ok=True)
    with open(os.path.join(tree, 'etc', 'hostname'), 'w') as name:
        name.write('ferrum-agent-test\n')
    with open(os.path.join(tree, 'payload.bin'), 'wb') as payload:
        payload.write(os.urandom(2 * MIB))
    with open(raw, 'wb') as image:
        image.truncate(size_mib * MIB)
    disk_id = '0x%08x' % int.from_bytes(os.urandom(4), 'little')
    subprocess.run(['sfdisk', '--quiet', raw], check=True,
                   input='label: dos\nlabel-id: %s\nstart=2048, type=83\n'
                   % disk_id, text=True, capture_output=True)
    part = os.path.join(directory, 'part.ext4')
    part_mib = size_mib - 1
    subprocess.run(['mkfs.ext4', '-q', '-F', '-d', tree, '-L', 'ferrumroot',
                    part, '%dM' % part_mib], check=True, capture_output=True)
    with open(part, 'rb') as source, open(raw, 'r+b') as image:
        image.seek(MIB)
        image.write(source.read())
    os.unlink(part)
    subprocess.run(['qemu-img', 'convert', '-f', 'raw', '-O', 'qcow2', raw,
                    qcow2], check=True, capture_output=True)
    return Images(raw=raw, qcow2=qcow2, raw_sha256=sha256_file(raw),
                  qcow2_sha256=sha256_file(qcow2),
                  size=os.path.getsize(raw), disk_id=disk_id)


class _Handler(http.server.SimpleHTTPRequestHandler):
    server: '_Server'

    def do_GET(self) -> None:
        self.server.requests.append(self.path)
        held = self.server.held.get(self.path.split('?')[0])
        if held is not None:
            held.wait(timeout=600)
        if self.path.split('?')[0] in self.server.missing:
            self.send_error(404, 'Not Found')
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    requests: list[str]
    missing: set[str]
    held: dict[str, threading.Event]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client gone mid-answer (an agent killed mid-download)


class ImageServer:
    """``http.server`` over ``directory`` on 127.0.0.1, in a thread.

    ``with ImageServer(folder) as server: server.url('disk.raw')``;
    ``server.missing('/gone.raw')`` makes a path answer 404; ``with
    server.hold('disk.raw'):`` keeps the answers to that path waiting
    until the block ends; ``server.requests`` lists the paths asked for.
    """

    def __init__(self, directory: str) -> None:
        def handler(*args: Any) -> _Handler:
            return _Handler(*args, directory=directory)
        self._server = _Server(('127.0.0.1', 0), handler)
        self._server.requests = []
        self._server.missing = set()
        self._server.held = {}
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True)

    def __enter__(self) -> 'ImageServer':
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def url(self, name: str) -> str:
        """The URL of ``name`` (a file in the folder, or a missing one)."""
        return 'http://127.0.0.1:%d/%s' % (self.port, name.lstrip('/'))

    def missing(self, path: str) -> str:
        """Answer 404 for ``path`` from now on; its URL."""
        self._server.missing.add('/' + path.lstrip('/'))
        return self.url(path)

    @contextlib.contextmanager
    def hold(self, path: str) -> Iterator[None]:
        """Requests for ``path`` wait (up to 600 s) until the block ends,
        then are answered: the agent stays in the middle of its download."""
        key = '/' + path.lstrip('/')
        event = self._server.held[key] = threading.Event()
        try:
            yield
        finally:
            del self._server.held[key]
            event.set()

    @property
    def requests(self) -> list[str]:
        """The paths fetched so far, in order."""
        return list(self._server.requests)
