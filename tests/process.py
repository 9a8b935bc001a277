# SPDX-License-Identifier: Apache-2.0
"""Child processes for tests: never left running, killed at a chosen step,
and free ports for them."""

import contextlib
import signal
import socket
import subprocess
from collections.abc import Iterator
from typing import Any

from tests.polling import wait_for


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


def kill_when(child: subprocess.Popen, reached: Any, timeout: float = 60,
              what: str = 'the child to reach the step') -> None:
    """SIGKILL ``child`` once ``reached()`` is true; fail (with the end of
    its standard error, which must be a pipe) if it exits before."""
    try:
        wait_for(lambda: child.poll() is not None or reached(),
                 timeout=timeout, interval=0.02, what=what)
        assert child.poll() is None, child.stderr.read().decode()[-2000:]
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stderr.close()
