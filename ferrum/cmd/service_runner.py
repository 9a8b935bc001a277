# SPDX-License-Identifier: Apache-2.0
"""Runs a service in the foreground under systemd's notify protocol.

The main thread only waits for signals: SIGTERM (and SIGINT) stops the
service gracefully after telling systemd STOPPING=1; SIGHUP reloads the
mutable options from the config files and reopens the log files. Signal
handlers only set flags; the work happens on the main thread afterwards.
"""

import gc
import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType

from oslo_config import cfg
from oslo_log import log

from ferrum.common import systemd

LOG = logging.getLogger(__name__)


class _Signals:
    def __init__(self) -> None:
        self.wakeup = threading.Event()
        self.stop = False
        self.reload = False

    def on_stop(self, signum: int, _frame: FrameType | None) -> None:
        self.stop = True
        self.wakeup.set()

    def on_reload(self, signum: int, _frame: FrameType | None) -> None:
        self.reload = True
        self.wakeup.set()


def freeze_start_up() -> None:
    """Move every object alive now out of the garbage collector's sight.

    What start-up builds (modules, the configuration, SQLAlchemy's
    metadata, the JSON schemas, the policy rules) lives as long as the
    process, yet each full collection walked all of it: a page of 1000
    rows allocates enough to start one every few requests, and each took
    about 100 ms, so a list's p95 was four times its median
    (doc/performance.md, "GC"). Frozen objects are still freed by
    reference counting; only cycles among them would stay, and start-up
    makes none that die.
    """
    gc.collect()
    gc.freeze()


def run(conf: cfg.ConfigOpts, start: Callable[[], None],
        stop: Callable[[], None], name: str) -> int:
    """Start, notify READY=1, serve until SIGTERM, stop; the exit status.

    An exception from ``start`` propagates: :func:`ferrum.cmd.startup.main`
    reports it.
    """
    signals = _Signals()
    signal.signal(signal.SIGTERM, signals.on_stop)
    signal.signal(signal.SIGINT, signals.on_stop)
    signal.signal(signal.SIGHUP, signals.on_reload)
    start()
    freeze_start_up()
    systemd.ready()
    LOG.info('%s is ready', name)
    while not signals.stop:
        signals.wakeup.wait()
        signals.wakeup.clear()
        if signals.reload and not signals.stop:
            signals.reload = False
            systemd.reloading()
            conf.mutate_config_files()
            log.setup(conf, 'ferrum')  # reopens log files after rotation
            LOG.info('%s reloaded its configuration', name)
            systemd.ready()
    systemd.stopping()
    LOG.info('%s is stopping', name)
    stop()
    return 0
