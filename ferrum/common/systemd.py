# SPDX-License-Identifier: Apache-2.0
"""A tiny client for systemd's service notification protocol (sd_notify).

The protocol: a service started with ``Type=notify`` (or ``notify-reload``)
finds the path of an ``AF_UNIX`` datagram socket in the environment variable
``NOTIFY_SOCKET`` and sends it newline-separated ``KEY=value`` assignments,
one datagram per message. A name starting with ``@`` is in Linux's abstract
namespace: the ``@`` stands for a leading NUL byte. ferrum sends

* ``READY=1`` once it serves (systemd holds ``systemctl start`` until then,
  and orders units that come ``After=`` this one on it),
* ``RELOADING=1`` with ``MONOTONIC_USEC=`` (the ``CLOCK_MONOTONIC`` time in
  microseconds, which ``Type=notify-reload`` requires) when SIGHUP starts a
  reload, followed by ``READY=1`` when the reload is done,
* ``STOPPING=1`` when a graceful stop begins, and
* ``STATUS=`` free text that ``systemctl status`` shows.

ferrum has its own client rather than a dependency (``sdnotify``,
``systemd-python``) because the protocol is a single ``sendto()``: a few
lines of stdlib need no compiled libsystemd bindings, no extra package in
every deployment, and behave the same in the conductor and in the
all-in-one process, where API and conductor share one main PID (the only
one ``NotifyAccess=main`` accepts messages from). ``NOTIFY_SOCKET`` is
deliberately left in the environment, unlike ``sd_notify(unset_environment
=1)``: the process notifies many times over its life (ready, reloads, stop).

Every function returns whether the message was sent. Not running under
systemd (no ``NOTIFY_SOCKET``) is normal and silent; a failure to send is
logged and never raised, since notification must not take the service down.
"""

import logging
import os
import socket
import time

LOG = logging.getLogger(__name__)

_ENV = 'NOTIFY_SOCKET'


def _address(name: str) -> str | None:
    """The socket address for a ``NOTIFY_SOCKET`` value, or None."""
    if name.startswith('@'):
        # Abstract namespace: the name is the bytes after a leading NUL.
        return '\0' + name[1:]
    if name.startswith('/'):
        return name
    return None


def notify(state: str) -> bool:
    """Send ``state`` (``KEY=value`` lines) to systemd in one datagram.

    :returns: True when sent; False when ``NOTIFY_SOCKET`` is unset or
        empty (not under systemd), and False, after logging, when the
        address is unsupported or sending fails.
    """
    name = os.environ.get(_ENV)
    if not name:
        return False
    address = _address(name)
    if address is None:
        LOG.warning('Cannot notify systemd: unsupported %s address %r',
                    _ENV, name)
        return False
    try:
        with socket.socket(socket.AF_UNIX,
                           socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.sendto(state.encode('utf-8'), address)
    except OSError as exc:
        LOG.warning('Cannot notify systemd on %s (%s): %s',
                    name, state.replace('\n', ' '), exc)
        return False
    return True


def _status_line(text: str) -> str:
    # A newline would end the assignment and start a bogus one.
    return 'STATUS=' + ' '.join(text.splitlines())


def ready(status: str | None = None) -> bool:
    """Tell systemd the service is up (``READY=1``), optionally a status."""
    state = 'READY=1'
    if status is not None:
        state += '\n' + _status_line(status)
    return notify(state)


def stopping() -> bool:
    """Tell systemd a graceful stop has begun (``STOPPING=1``)."""
    return notify('STOPPING=1')


def reloading() -> bool:
    """Tell systemd a reload has begun; send ``ready()`` when it is done.

    ``MONOTONIC_USEC`` lets systemd (``Type=notify-reload``) match this
    message to the reload it asked for.
    """
    usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    return notify('RELOADING=1\nMONOTONIC_USEC=%d' % usec)


def status(text: str) -> bool:
    """Set the free-text status ``systemctl status`` shows (``STATUS=``)."""
    return notify(_status_line(text))
