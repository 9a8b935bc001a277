# SPDX-License-Identifier: Apache-2.0
"""The conductor's client of ironic-python-agent's command API (IPA 13).

The one module that talks to the agent on a node, as sushy is for Redfish;
every failure becomes an :mod:`ferrum.drivers.agent.errors` exception.
IPA's routes (``ironic_python_agent/api/app.py``): ``GET /v1/status`` (no
token), ``GET /v1/commands/`` (every command since the agent started,
oldest first), ``GET /v1/commands/<id>``, and ``POST
/v1/commands/?wait=true|false`` with ``{"name": "<extension>.<command>",
"params": {...}}``. Each ``/v1/commands`` call carries the node's token as
``?agent_token=``: no log line or exception of this module holds it or a
URL with its query, and urllib3's debug lines (which do) are redacted.

A request that got no answer is sent again, up to ``[agent]
max_command_attempts`` times ``command_retry_interval`` apart, and so is a
command the agent refused as busy (409). A command whose connection broke
after it was sent may have reached the agent, which gives commands no
request id: the agent's last command is read first, and one of the same
name is taken for the one sent when it is RUNNING, or finished and not the
last command this client saw from that agent. Without that memory (after a
conductor restart) a finished one is sent again: a repeat is a lesser harm
than a step taken for done that never ran.

One client serves every node from many threads: one HTTP adapter (pools
and TLS context) per agent URL and CA, :data:`_ADAPTERS` at most. Proxies
from the environment are never used: the agent is on the provisioning
network.
"""

import collections
import dataclasses
import http.client
import logging
import re
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import requests
import urllib3.exceptions
from oslo_config import cfg
from requests import adapters

from ferrum.drivers.agent import errors

LOG = logging.getLogger(__name__)

RUNNING = 'RUNNING'
SUCCEEDED = 'SUCCEEDED'
FAILED = 'FAILED'
#: IPA's VersionMismatch: its hardware managers changed since the steps
#: were read; the caller starts the steps again.
VERSION_MISMATCH = 'CLEAN_VERSION_MISMATCH'
STATUSES = frozenset({RUNNING, SUCCEEDED, FAILED, VERSION_MISMATCH})

#: Characters of the agent's own text kept in a message (node last_error).
_MAX_TEXT = 500
#: Adapters kept; the least recently used is closed.
_ADAPTERS = 64
#: Agents whose last command id is remembered (see the module docstring).
_REMEMBERED = 4096
_TOKEN_QUERY = re.compile(r'(agent_token=)[^&\s\'")]*')
#: Where urllib3 logs request URLs with their query.
_URLLIB3_LOGGERS = ('urllib3.connectionpool', 'urllib3.connection',
                    'urllib3.poolmanager', 'urllib3.util.retry')
_COMMANDS = '/v1/commands/'


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """Where a node's agent listens, from the heartbeat carrying the token.

    :ivar url: the heartbeat's callback_url, e.g. https://10.0.0.5:9999.
    :ivar token: the node's agent token (not in ``repr``).
    :ivar ca_pem: the heartbeat's agent_verify_ca (PEM); None with https:
        the default CA bundle verifies the agent.
    """

    node: str
    url: str
    token: str = dataclasses.field(repr=False)
    ca_pem: str | None = dataclasses.field(default=None, repr=False)


@dataclasses.dataclass(frozen=True)
class Command:
    """One command result as the agent reports it (``command_*``)."""

    id: str
    name: str  # as IPA records it: mostly without "<extension>."
    status: str  # one of STATUSES
    error: Any = None
    result: Any = None

    @property
    def done(self) -> bool:
        return self.status != RUNNING

    def message(self) -> str:
        """The agent's error text, on one line of bounded length.

        IPA serializes its errors as ``{"type", "code", "message",
        "details"}``; a string is taken as it is.
        """
        error = self.error
        if isinstance(error, dict):
            text = ': '.join(str(error[key]) for key in ('message', 'details')
                             if error.get(key))
            text = text or str(error.get('type') or error)
        else:
            text = 'the agent gave no reason' if error is None else str(error)
        return _bounded(text)


def _bounded(text: str) -> str:
    text = ' '.join(text.split())
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT - 3] + '...'


def _scrub(text: str, token: str) -> str:
    """``text`` bounded, without the token (requests' messages hold the
    request's URL with its query)."""
    text = _TOKEN_QUERY.sub(r'\1***', text)
    return _bounded(text.replace(token, '***') if token else text)


class _RedactToken(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if 'agent_token=' in text:
            record.msg, record.args = _TOKEN_QUERY.sub(r'\1***', text), ()
        return True


_REDACT = _RedactToken()


class _Lost(Exception):
    """No answer; ``sent``: the request may have reached the agent."""

    def __init__(self, reason: str, sent: bool) -> None:
        super().__init__(reason)
        self.reason, self.sent = reason, sent


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it wraps, as requests and urllib3 nest them."""
    pending: list[Any] = [exc]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if isinstance(current, BaseException) and id(current) not in seen:
            seen.add(id(current))
            yield current
            pending += [current.__cause__, current.__context__,
                        getattr(current, 'reason', None), *current.args]


class _CAAdapter(adapters.HTTPAdapter):
    """Trusts one CA only, the agent's own: not requests' bundle too."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._context = context  # read by init_poolmanager, called below
        super().__init__()

    def init_poolmanager(self, connections: int, maxsize: int,
                         block: bool = False, **pool_kwargs: Any) -> None:
        pool_kwargs['ssl_context'] = self._context
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)

    def cert_verify(self, conn: Any, url: str, verify: Any,
                    cert: Any) -> None:
        super().cert_verify(conn, url, verify, cert)
        conn.ca_certs = conn.ca_cert_dir = None  # set to the bundle above


class AgentClient:
    """Sends commands to nodes' agents; thread-safe, one per conductor.

    Besides what each method names, every call may raise
    :class:`~.errors.AgentUnreachable`, :class:`~.errors.AgentTokenRefused`,
    :class:`~.errors.AgentTLSError` or :class:`~.errors.AgentError` (an
    HTTP error, or an answer that is no command result), and a command
    :class:`~.errors.AgentBusy`.

    :param sleep: waits between attempts and polls (tests inject theirs).
    :param clock: the monotonic clock of :meth:`wait`'s limit.
    """

    def __init__(self, conf: cfg.ConfigOpts,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._conf = conf
        self._sleep = sleep
        self._clock = clock
        self._session = requests.Session()
        self._lock = threading.Lock()
        self._adapters: collections.OrderedDict[
            tuple[str, str], _CAAdapter] = collections.OrderedDict()
        self._seen: collections.OrderedDict[
            tuple[str, str], str] = collections.OrderedDict()
        for name in _URLLIB3_LOGGERS:
            # addFilter skips a filter already there: one per process.
            logging.getLogger(name).addFilter(_REDACT)

    def close(self) -> None:
        with self._lock:
            for adapter in self._adapters.values():
                adapter.close()
            self._adapters.clear()
        self._session.close()

    def status(self, ep: Endpoint) -> dict[str, Any]:
        """``{"started_at": <epoch>, "version": "13.0.0"}``; no token."""
        what = 'GET /v1/status'
        body = self._call(ep, 'GET', '/v1/status', what, token=False)
        if not isinstance(body, dict):
            raise errors.AgentError(node=ep.node, command=what,
                                    reason='the answer is no JSON object')
        return body

    def run(self, ep: Endpoint, name: str, params: dict[str, Any]) -> Command:
        """Run ``name`` (wait=true) and return it finished.

        :raises AgentCommandFailed: it FAILED on the agent.
        :raises AgentTimeout: found RUNNING after a lost answer, and not
            finished within [agent]command_timeout.
        """
        command = self._post(ep, name, params, wait=True)
        if not command.done:  # recovered after a lost answer
            command = self.wait(ep, command, self._conf.agent.command_timeout)
        if command.status == FAILED:
            raise errors.AgentCommandFailed(
                node=ep.node, command=name, result=command,
                reason=_scrub(command.message(), ep.token))
        return command

    def start(self, ep: Endpoint, name: str,
              params: dict[str, Any]) -> Command:
        """Start ``name`` (wait=false): RUNNING, or finished when it is
        synchronous or failed at once. FAILED is returned, not raised."""
        return self._post(ep, name, params, wait=False)

    def get(self, ep: Endpoint, command_id: str) -> Command:
        path = _COMMANDS + urllib.parse.quote(command_id, safe='')
        what = 'GET ' + path
        return self._parse(ep, what, self._call(ep, 'GET', path, what))

    def last_command(self, ep: Endpoint) -> Command | None:
        """The agent's latest command; None: none since it started."""
        what = 'GET ' + _COMMANDS
        return self._last(ep, self._call(ep, 'GET', _COMMANDS, what))

    def wait(self, ep: Endpoint, command: Command, timeout: float) -> Command:
        """Read ``command`` every [agent]command_poll_interval until done.

        :returns: the finished command, FAILED and CLEAN_VERSION_MISMATCH
            included: the caller decides.
        :raises AgentTimeout: still RUNNING after ``timeout`` seconds.
        """
        deadline = self._clock() + timeout
        interval = self._conf.agent.command_poll_interval
        while not command.done:
            left = deadline - self._clock()
            if left <= 0:
                raise errors.AgentTimeout(
                    node=ep.node, command=command.name,
                    command_id=command.id, seconds=timeout)
            self._sleep(min(interval, left))
            command = self.get(ep, command.id)
        return command

    # ---- requests, retried --------------------------------------------------

    def _post(self, ep: Endpoint, name: str, params: dict[str, Any],
              wait: bool) -> Command:
        command = self._parse(ep, name, self._call(
            ep, 'POST', _COMMANDS, name,
            {'wait': 'true' if wait else 'false'},
            {'name': name, 'params': params}))
        self._remember(ep, command.id)
        return command

    def _call(self, ep: Endpoint, method: str, path: str, what: str,
              query: dict[str, str] | None = None, body: Any = None,
              token: bool = True) -> Any:
        """The JSON answer, within [agent]max_command_attempts."""
        options = self._conf.agent
        busy = reason = ''
        for attempt in range(1, options.max_command_attempts + 1):
            if attempt > 1:
                self._sleep(options.command_retry_interval)
            try:
                response = self._send(ep, method, path, what, query, body,
                                      token)
            except _Lost as exc:
                busy, reason = '', exc.reason
                found = (self._arrived(ep, what)
                         if exc.sent and method == 'POST' else None)
                if found is not None:
                    return found
            else:
                if response.status_code != 409:
                    return self._json(ep, what, response)
                # AgentIsBusy: IPA stored nothing, so sending again is safe.
                busy = reason = self._fault(ep, response)
            LOG.info('The agent of node %(node)s did not take %(what)s '
                     '(attempt %(n)d of %(of)d): %(reason)s',
                     {'node': ep.node, 'what': what, 'n': attempt,
                      'of': options.max_command_attempts, 'reason': reason})
        if busy:
            raise errors.AgentBusy(node=ep.node, command=what, reason=busy,
                                   attempts=options.max_command_attempts)
        raise errors.AgentUnreachable(
            node=ep.node, url=ep.url, command=what, reason=reason,
            attempts=options.max_command_attempts)

    def _arrived(self, ep: Endpoint, name: str) -> Any:
        """The agent's record of command ``name`` if it got it though the
        answer was lost (see the module docstring); None: send again."""
        with self._lock:
            seen = self._seen.get((ep.node, ep.url))
        try:
            body = self._json(ep, name, self._send(ep, 'GET', _COMMANDS, name))
        except _Lost:
            return None
        last = self._last(ep, body)
        if last is None or last.name not in (name, name.partition('.')[2]):
            return None
        if last.status != RUNNING and (seen is None or last.id == seen):
            return None  # finished: maybe an earlier command of that name
        LOG.info('The agent of node %(node)s got %(command)s though its '
                 'answer was lost: not sending it again',
                 {'node': ep.node, 'command': name})
        return body['commands'][-1]

    def _send(self, ep: Endpoint, method: str, path: str, what: str,
              query: dict[str, str] | None = None, body: Any = None,
              token: bool = True) -> requests.Response:
        """One request; a POST's 409 is returned, other errors raised.

        :raises _Lost: no answer arrived.
        """
        params = dict(query or {})
        if token:
            params['agent_token'] = ep.token
        LOG.debug('%(method)s %(path)s on the agent of node %(node)s at '
                  '%(url)s', {'method': method, 'path': path,
                              'node': ep.node, 'url': ep.url})
        try:
            request = self._session.prepare_request(requests.Request(
                method, ep.url.rstrip('/') + path, params=params, json=body))
            response = self._adapter(ep, what).send(
                request, timeout=self._conf.agent.command_timeout,
                verify=True)
            # Read the body here: a connection dropped in it is a lost
            # answer too.
            _ = response.content
        except requests.RequestException as exc:
            raise self._failure(ep, what, exc) from None
        code = response.status_code
        if code == 401:
            raise errors.AgentTokenRefused(node=ep.node, url=ep.url,
                                           command=what)
        if code >= 400 and (code != 409 or method != 'POST'):
            raise errors.AgentError(
                node=ep.node, command=what, status=code,
                reason='HTTP %d: %s' % (code, self._fault(ep, response)))
        return response

    def _failure(self, ep: Endpoint, what: str,
                 exc: requests.RequestException) -> Exception:
        """What a failed request raises (``from None``: requests'
        exceptions show the URL with the token)."""
        causes = list(_causes(exc))
        # The socket's or http.client's own words ("[Errno 111] Connection
        # refused") rather than urllib3's wrappers around them.
        inner = [cause for cause in causes if isinstance(
            cause, (OSError, http.client.HTTPException)) and not isinstance(
                cause, requests.RequestException)]
        reason = _scrub(str(inner[-1] if inner else exc), ep.token)
        if isinstance(exc, requests.Timeout):
            reason = 'no answer within [agent]command_timeout (%s seconds)' % (
                self._conf.agent.command_timeout)
        for cause in causes:
            if isinstance(cause, ssl.SSLCertVerificationError):
                return errors.AgentTLSError(
                    node=ep.node, url=ep.url, command=what, reason=str(
                        cause.verify_message or cause.reason).rstrip('.'))
            if isinstance(cause, (requests.ConnectTimeout,
                                  urllib3.exceptions.ConnectTimeoutError)):
                # Refused or timed out connecting (NewConnectionError is
                # one): the request never left.
                return _Lost(reason, sent=False)
        if isinstance(exc, (requests.ConnectionError, requests.Timeout,
                            requests.exceptions.ChunkedEncodingError)):
            return _Lost(reason, sent=True)
        return errors.AgentError(node=ep.node, command=what, reason=reason)

    def _adapter(self, ep: Endpoint, what: str) -> adapters.BaseAdapter:
        # Chosen per request, not mounted on the session: mounting while
        # other threads send is unsafe, and one URL may come with two CAs
        # (an address taken over by another node's agent).
        if ep.ca_pem is None or not ep.url.lower().startswith('https:'):
            return self._session.get_adapter(ep.url)
        key = (ep.url.rstrip('/'), ep.ca_pem)
        with self._lock:
            adapter = self._adapters.get(key)
            if adapter is None:
                try:
                    context = ssl.create_default_context(cadata=ep.ca_pem)
                except (ssl.SSLError, ValueError) as exc:
                    raise errors.AgentTLSError(
                        node=ep.node, url=ep.url, command=what,
                        reason='agent_verify_ca is no PEM certificate '
                               '(%s)' % exc) from None
                adapter = self._adapters[key] = _CAAdapter(context)
                while len(self._adapters) > _ADAPTERS:
                    self._adapters.popitem(last=False)[1].close()
            self._adapters.move_to_end(key)
        return adapter

    # ---- answers ------------------------------------------------------------

    def _json(self, ep: Endpoint, what: str,
              response: requests.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            raise errors.AgentError(
                node=ep.node, command=what, status=response.status_code,
                reason='the answer (HTTP %d) is not JSON: %s' % (
                    response.status_code,
                    _scrub(response.text, ep.token))) from None

    def _fault(self, ep: Endpoint, response: requests.Response) -> str:
        """IPA's error text (its ``faultstring``), else the body."""
        try:
            body = response.json()
        except ValueError:
            body = None
        text = body.get('faultstring') if isinstance(body, dict) else None
        return _scrub(str(text or response.text or response.reason),
                      ep.token)

    def _parse(self, ep: Endpoint, what: str, data: Any) -> Command:
        if not isinstance(data, dict) or not all(
                isinstance(data.get(key), str)
                for key in ('id', 'command_name', 'command_status')):
            raise errors.AgentError(
                node=ep.node, command=what,
                reason='the answer is no command result (id, command_name, '
                       'command_status): %s' % _scrub(str(data), ep.token))
        if data['command_status'] not in STATUSES:
            raise errors.AgentError(
                node=ep.node, command=what,
                reason='unknown command_status %s' % _scrub(
                    data['command_status'], ep.token))
        return Command(data['id'], data['command_name'],
                       data['command_status'], data.get('command_error'),
                       data.get('command_result'))

    def _last(self, ep: Endpoint, body: Any) -> Command | None:
        what = 'GET ' + _COMMANDS
        commands = body.get('commands') if isinstance(body, dict) else None
        if not isinstance(commands, list):
            raise errors.AgentError(
                node=ep.node, command=what,
                reason='the answer has no "commands" list')
        if not commands:
            return None
        last = self._parse(ep, what, commands[-1])
        self._remember(ep, last.id)
        return last

    def _remember(self, ep: Endpoint, command_id: str) -> None:
        with self._lock:
            self._seen[(ep.node, ep.url)] = command_id
            self._seen.move_to_end((ep.node, ep.url))
            while len(self._seen) > _REMEMBERED:
                self._seen.popitem(last=False)
