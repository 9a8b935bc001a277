# SPDX-License-Identifier: Apache-2.0
"""How the clients tests reach the session's ferrum (conftest.py starts
one per database backend): names no other test uses, openstacksdk's
connection, the ``baremetal`` CLI, and waiting on a loaded machine.
"""

import contextlib
import io
import json
import logging
import os
import subprocess
import sys
import uuid
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import openstack
import requests

from tests.polling import wait_for

#: How long a node may take for one state change on a loaded CI machine.
WAIT_TIMEOUT = 60.0
DRIVER = 'fake-hardware'
BAREMETAL = os.path.join(os.path.dirname(sys.executable), 'baremetal')
#: ``--wait`` timeout, seconds (the CLI polls every 2 s).
WAIT = '60'


def unique(prefix: str) -> str:
    """A name no other test uses (resource classes, node names)."""
    return '%s-%s' % (prefix, uuid.uuid4().hex[:10])


def unique_mac() -> str:
    """A MAC address no other port in the session has (ports are unique)."""
    return '52:54:00:%s' % ':'.join(
        '%02x' % b for b in uuid.uuid4().bytes[:3])


def wait_until(predicate: Callable[[], Any], what: str,
               timeout: float = WAIT_TIMEOUT) -> Any:
    """Poll ``predicate`` until it returns something truthy, or fail."""
    return wait_for(predicate, timeout, interval=0.02, what=what)


def connect(url: str, **options: Any) -> openstack.connection.Connection:
    """openstacksdk as a standalone user configures it: no Keystone."""
    return openstack.connect(
        load_yaml_config=False, load_envvars=False, auth_type='none',
        baremetal_endpoint_override=url, **options)


def in_process(argv: list[str], env: dict[str, str]
               ) -> subprocess.CompletedProcess[str]:
    """``baremetal argv``, run by the command's own entry point
    (``ironicclient.shell.main``, what the console script calls) in this
    process, with ``env`` as its whole environment and its output
    captured: the same code as the command, less the interpreter start
    and imports that cost each call 0.8-1.3 s of CPU (about 150 calls a
    run). Each request times out after 180 s (``--timeout``), the bound
    the whole process had.

    osc-lib configures logging and the warning filters at every run
    (handlers on the root logger, levels on ``requests``, ``stevedore``
    and others); all of it is put back, so that no handler writes to a
    captured stream after the call and the next test's ``caplog`` sees
    what it would have seen.
    """
    from ironicclient import shell
    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        with _logging_kept(), warnings.catch_warnings(), \
                contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            try:
                code = shell.main(['--timeout', '180', *argv])
            except SystemExit as exc:  # argparse, on a usage error
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess([BAREMETAL, *argv], code,
                                       out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _logging_kept() -> Iterator[None]:
    """Every logger as it was before the block; one the block created is
    left as a new one is (no level, no handler, propagating)."""
    def state(logger: logging.Logger) -> tuple[Any, ...]:
        return (logger.level, logger.handlers[:], logger.propagate,
                logger.disabled)

    root = logging.getLogger()
    before = {name: state(logger) for name, logger
              in logging.Logger.manager.loggerDict.items()
              if isinstance(logger, logging.Logger)}
    kept_root = state(root)
    try:
        yield
    finally:
        fresh = (logging.NOTSET, [], True, False)
        for name, logger in list(logging.Logger.manager.loggerDict.items()):
            if isinstance(logger, logging.Logger):
                _restore(logger, before.get(name, fresh))
        _restore(root, kept_root)


def _restore(logger: logging.Logger, state: tuple[Any, ...]) -> None:
    level, handlers, propagate, disabled = state
    logger.setLevel(level)
    logger.handlers[:] = handlers
    logger.propagate, logger.disabled = propagate, disabled


class Baremetal:
    """Runs ``baremetal`` against one endpoint, without Keystone; a
    subclass may authenticate otherwise (:attr:`auth`, :attr:`env`)."""

    def __init__(self, url: str, home: str) -> None:
        self.url = url
        self.env = {key: value for key, value in os.environ.items()
                    if not key.startswith('OS_')}
        self.env['HOME'] = home  # no ~/.config/openstack/clouds.yaml
        self.auth = ['--os-endpoint', url, '--os-auth-type', 'none']

    #: Run each command as a process of its own, not :func:`in_process`:
    #: for a test of what the command finds under ``HOME``, which
    #: openstacksdk reads once, when it is imported.
    own_process = False

    def run(self, *args: str, retries: bool = True
            ) -> subprocess.CompletedProcess[str]:
        options = [] if retries else ['--max-retries', '0']
        if not self.own_process:
            return in_process([*self.auth, *options, *args], self.env)
        return subprocess.run(
            [BAREMETAL, *self.auth, *options, *args], check=False,
            env=self.env, capture_output=True, text=True, timeout=180,
            stdin=subprocess.DEVNULL)

    def __call__(self, *args: str) -> str:
        """Run a command that must succeed; its standard output."""
        result = self.run(*args)
        assert result.returncode == 0, (
            'baremetal %s exited with %d:\n%s%s' % (
                ' '.join(args), result.returncode, result.stdout,
                result.stderr))
        assert 'Traceback' not in result.stderr, result.stderr
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, '-f', 'json'))

    def fails(self, *args: str) -> str:
        """Run a command that must fail cleanly; its error output.

        Without the CLI's retries: it retries a 409 five times, 2 s apart.
        """
        result = self.run(*args, retries=False)
        assert result.returncode != 0, result.stdout
        assert 'Traceback' not in result.stderr, result.stderr
        return result.stderr

    def node(self, uuid: str) -> dict[str, Any]:
        """The node as the API shows it (faster than ``node show``)."""
        response = requests.get(
            '%s/v1/nodes/%s' % (self.url, uuid), timeout=30,
            headers={'X-OpenStack-Ironic-API-Version': 'latest'})
        assert response.status_code == 200, response.text
        node: dict[str, Any] = response.json()
        return node
