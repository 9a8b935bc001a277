# SPDX-License-Identifier: Apache-2.0
"""One policy for what a driver hook raises (see drivers/base.py's rules).

A :class:`~ferrum.common.exception.DriverError` is an expected failure the
driver described: one ERROR line and the node's ``last_error``. Any other
exception from a hook is a bug in the driver (or in ferrum): the same
``last_error``, but the log gets the traceback, which is what whoever fixes
it needs.
"""

import logging

from ferrum.common import exception
from ferrum.drivers import base

LOG = logging.getLogger(__name__)


def describe(task: base.Task, what: str, exc: BaseException,
             level: int = logging.ERROR) -> str:
    """Log ``exc`` by the policy above; return the ``last_error`` text.

    :param what: what failed, as the start of a sentence ("Deploy failed in
        the FakeDeploy interface").
    :param level: the level of the line for an expected failure (a
        ``validate`` refusing a node is routine, not an error); a bug is
        always logged at ERROR, with its traceback.
    """
    text = '%s: %s' % (what, exc)
    if isinstance(exc, exception.FerrumException):
        LOG.log(level, 'Node %(node)s: %(error)s (%(purpose)s)',
                {'node': task.node.uuid, 'error': text,
                 'purpose': task.purpose})
    else:
        LOG.error('Node %(node)s: %(error)s (%(purpose)s); this is a bug in '
                  'the driver, traceback follows',
                  {'node': task.node.uuid, 'error': text,
                   'purpose': task.purpose}, exc_info=exc)
    return text
