# SPDX-License-Identifier: Apache-2.0
"""What every console script does with a mistake found at start.

A config file that is missing or unparseable, an option with a bad value,
a database that cannot be used or did not answer within oslo.db's retries
(``[database] max_retries``, ``retry_interval``), a driver or an address
refused: each is one line on standard error, ``<program> cannot start:
<what is wrong and what to do>``, and exit status 1 (2 for
``ferrum-placement``, whose 1 means a backlog). A traceback would
bury that line and suggests a bug; systemd restarts the service anyway.
Anything else is a bug and keeps its traceback.
"""

import logging
import sys
from collections.abc import Callable

from oslo_config import cfg

from ferrum.common import exception

LOG = logging.getLogger(__name__)


def main(name: str, body: Callable[[], int], failure: int = 1) -> int:
    """Run ``body`` (the program); its exit status, ``failure`` if it
    cannot start (a tool whose 1 means something else picks another)."""
    try:
        return body()
    except (cfg.Error, exception.FerrumException) as exc:
        reason = str(exc)
    # Outside the except clause: oslo.log would append the exception again.
    line = '%s cannot start: %s' % (name, reason)
    LOG.error('%s', line)
    if not _logs_to_stderr():
        # The log goes to a file, the journal or standard output (oslo.log's
        # default); whoever started the program reads standard error.
        print(line, file=sys.stderr)
    return failure


def _logs_to_stderr() -> bool:
    """Whether a handler of the root logger writes to standard error
    (oslo.log's until ``log.setup``, or Python's own)."""
    handlers = logging.getLogger().handlers
    if not handlers:
        return True  # Python's last-resort handler writes there
    return any(getattr(handler, 'stream', None) is sys.stderr
               for handler in handlers)
