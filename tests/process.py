# SPDX-License-Identifier: Apache-2.0
"""Child processes for tests: never left running, and free ports for them."""

import contextlib
import socket
import subprocess
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def running(command: list[str], **kwargs: Any) -> Iterator[subprocess.Popen]:
    """A child process that is killed if the test leaves it running."""
    proc = subprocess.Popen(command, **kwargs)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def free_port(host: str = '127.0.0.1') -> int:
    """A TCP port nobody holds on ``host`` right now.

    Someone may still take it before the child binds it: callers retry
    with another port when the child reports the address in use.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
