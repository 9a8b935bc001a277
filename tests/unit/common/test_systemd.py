# SPDX-License-Identifier: Apache-2.0
"""The sd_notify client, against real AF_UNIX datagram sockets."""

import logging
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ferrum.common import systemd

RECV_TIMEOUT = 5.0


def _receiver(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(RECV_TIMEOUT)  # a missing message fails, never hangs
    return sock


def _recv(sock: socket.socket) -> dict[str, str]:
    lines = sock.recv(4096).decode('utf-8').split('\n')
    return dict(line.split('=', 1) for line in lines)


@pytest.fixture
def listener(tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """A socket bound in tmp_path, named by NOTIFY_SOCKET."""
    path = str(tmp_path / 'notify')
    with _receiver(path) as sock:
        monkeypatch.setenv('NOTIFY_SOCKET', path)
        yield sock


@pytest.fixture
def abstract_listener(
        monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """A socket in the abstract namespace, named '@...' by NOTIFY_SOCKET."""
    name = 'ferrum-test-notify-%d-%d' % (os.getpid(), time.monotonic_ns())
    with _receiver('\0' + name) as sock:
        monkeypatch.setenv('NOTIFY_SOCKET', '@' + name)
        yield sock


def test_ready(listener: socket.socket) -> None:
    assert systemd.ready() is True
    assert listener.recv(4096) == b'READY=1'


def test_ready_abstract_namespace(abstract_listener: socket.socket) -> None:
    assert systemd.ready() is True
    assert abstract_listener.recv(4096) == b'READY=1'


def test_ready_with_status(listener: socket.socket) -> None:
    assert systemd.ready('serving 3 nodes') is True
    assert _recv(listener) == {'READY': '1', 'STATUS': 'serving 3 nodes'}


def test_status(listener: socket.socket) -> None:
    assert systemd.status('taking over conductor group "rack-1"') is True
    assert _recv(listener) == {
        'STATUS': 'taking over conductor group "rack-1"'}


def test_status_newlines_stay_in_one_assignment(
        listener: socket.socket) -> None:
    assert systemd.status('line one\nREADY=1') is True
    assert _recv(listener) == {'STATUS': 'line one READY=1'}


def test_stopping(listener: socket.socket) -> None:
    assert systemd.stopping() is True
    assert listener.recv(4096) == b'STOPPING=1'


def test_reloading_sends_monotonic_usec(listener: socket.socket) -> None:
    before = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    assert systemd.reloading() is True
    after = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    message = _recv(listener)
    assert message['RELOADING'] == '1'
    assert before <= int(message['MONOTONIC_USEC']) <= after
    assert set(message) == {'RELOADING', 'MONOTONIC_USEC'}


def test_notify_sends_one_datagram_each_time(
        listener: socket.socket) -> None:
    assert systemd.notify('WATCHDOG=1')
    assert systemd.reloading()
    assert systemd.ready()
    assert listener.recv(4096) == b'WATCHDOG=1'
    assert _recv(listener)['RELOADING'] == '1'
    assert listener.recv(4096) == b'READY=1'


def test_notify_socket_is_not_unset(listener: socket.socket) -> None:
    path = os.environ['NOTIFY_SOCKET']
    systemd.ready()
    assert os.environ.get('NOTIFY_SOCKET') == path


@pytest.mark.parametrize('value', [None, ''])
def test_no_notify_socket(monkeypatch: pytest.MonkeyPatch,
                          caplog: pytest.LogCaptureFixture,
                          value: str | None) -> None:
    if value is None:
        monkeypatch.delenv('NOTIFY_SOCKET', raising=False)
    else:
        monkeypatch.setenv('NOTIFY_SOCKET', value)
    with caplog.at_level(logging.DEBUG, logger=systemd.__name__):
        assert systemd.notify('READY=1') is False
        assert systemd.ready() is False
        assert systemd.reloading() is False
        assert systemd.stopping() is False
        assert systemd.status('x') is False
    assert caplog.records == []


def test_nobody_listens_on_path(tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch,
                                caplog: pytest.LogCaptureFixture) -> None:
    # The socket file exists but its socket is closed: ECONNREFUSED.
    path = str(tmp_path / 'notify')
    _receiver(path).close()
    assert os.path.exists(path)
    monkeypatch.setenv('NOTIFY_SOCKET', path)
    with caplog.at_level(logging.WARNING, logger=systemd.__name__):
        assert systemd.ready() is False
    assert path in caplog.text


def test_missing_socket_path(tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch,
                             caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / 'absent')
    monkeypatch.setenv('NOTIFY_SOCKET', path)
    with caplog.at_level(logging.WARNING, logger=systemd.__name__):
        assert systemd.stopping() is False
    assert path in caplog.text


def test_nobody_listens_in_abstract_namespace(
        monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    name = 'ferrum-test-nobody-%d-%d' % (os.getpid(), time.monotonic_ns())
    monkeypatch.setenv('NOTIFY_SOCKET', '@' + name)
    with caplog.at_level(logging.WARNING, logger=systemd.__name__):
        assert systemd.ready() is False
    assert name in caplog.text


def test_unsupported_address(monkeypatch: pytest.MonkeyPatch,
                             caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv('NOTIFY_SOCKET', 'vsock:2:1234')
    with caplog.at_level(logging.WARNING, logger=systemd.__name__):
        assert systemd.ready() is False
    assert 'vsock:2:1234' in caplog.text
