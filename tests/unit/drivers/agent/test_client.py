# SPDX-License-Identifier: Apache-2.0
"""The agent client (ferrum/drivers/agent/client.py) against a real HTTP(S)
server on 127.0.0.1 that answers as ironic-python-agent 13's command API
does (ironic_python_agent/api/app.py, extensions/base.py)."""

import collections
import http.server
import json
import logging
import secrets
import socket
import ssl
import threading
import time
import urllib.parse
import uuid

import pytest

from ferrum.drivers.agent import client as client_mod
from ferrum.drivers.agent import errors
from tests.real import require_real

TOKEN = secrets.token_urlsafe(32)
UNAUTHORIZED = {'faultcode': 'Client',
                'faultstring': '401 Unauthorized: Token invalid.'}
DISK_GONE = {'type': 'CommandExecutionError', 'code': 500,
             'message': 'Command execution failed',
             'details': 'Error performing deploy_step write_image: '
                        '/dev/sda is gone'}


class FakeAgent:
    """IPA's command API, with knobs for the failures under test."""

    def __init__(self):
        self.lock = threading.Lock()
        self.commands = collections.OrderedDict()
        self.seen = []  # (method, path, query) of every request
        self.posts = 0
        self.busy = 0  # POSTs answered 409 AgentIsBusy
        self.drop_before = 0  # POSTs whose connection closes, not stored
        self.drop_after = 0  # POSTs stored, then the connection closes
        self.drop_get = 0  # GETs whose connection closes
        self.running = set()  # commands that stay RUNNING (async)
        self.fail = {}  # command -> its command_error
        self.raw = None  # (status, body): the answer to every request
        self.slow = 0.0  # seconds a POST waits after storing its command
        self.url = None

    def add(self, name, status='SUCCEEDED', error=None, result=None):
        entry = {'id': str(uuid.uuid4()), 'command_name': name,
                 'command_status': status, 'command_error': error,
                 'command_result': result}
        self.commands[entry['id']] = entry
        return entry

    def finish(self, command_id, status='SUCCEEDED'):
        self.commands[command_id]['command_status'] = status


class _Handler(http.server.BaseHTTPRequestHandler):

    def log_message(self, *args):
        pass

    def _reply(self, status, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start(self):
        agent = self.server.agent
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        with agent.lock:
            agent.seen.append((self.command, url.path, query))
        return agent, url.path, query

    def do_GET(self):
        agent, path, query = self._start()
        with agent.lock:
            drop, agent.drop_get = agent.drop_get, max(agent.drop_get - 1, 0)
        if drop:
            return  # HTTP/1.0: the connection closes without an answer
        if agent.raw:
            return self._reply(*agent.raw)
        if path == '/v1/status':
            return self._reply(200, {'started_at': 1.5, 'version': '13.0.0'})
        if query.get('agent_token') != TOKEN:
            return self._reply(401, UNAUTHORIZED)
        if path == '/v1/commands/':
            return self._reply(200, {'commands': list(
                agent.commands.values())})
        found = agent.commands.get(path.rsplit('/', 1)[1])
        if found is None:
            return self._reply(404, {
                'faultcode': 'Client', 'faultstring': 'Not found: Command '
                'Result with id %s not found.' % path.rsplit('/', 1)[1]})
        self._reply(200, found)

    def do_POST(self):
        agent, path, query = self._start()
        body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
        with agent.lock:  # handlers run in threads of their own
            answer = self._take(agent, query, body)
        if answer is None:
            return  # HTTP/1.0: the connection closes without an answer
        time.sleep(agent.slow)
        self._reply(*answer)

    def _take(self, agent, query, body):
        agent.posts += 1
        if agent.raw:
            return agent.raw
        if query.get('agent_token') != TOKEN:
            return 401, UNAUTHORIZED
        if agent.drop_before:
            agent.drop_before -= 1
            return None
        if agent.busy:
            agent.busy -= 1
            return 409, {'faultcode': 'Client', 'faultstring': 'Agent is '
                         'busy: executing command execute_deploy_step'}
        # IPA records a decorated command under its bare name.
        name = body['name'].split('.', 1)[1]
        if name in agent.fail:
            entry = agent.add(name, 'FAILED', error=agent.fail[name])
        elif name in agent.running:
            entry = agent.add(name, 'RUNNING')
        else:
            entry = agent.add(name, result={'params': body['params']})
        if agent.drop_after:
            agent.drop_after -= 1
            return None
        return 200, entry


class _Server(http.server.ThreadingHTTPServer):
    block_on_close = False

    def handle_error(self, request, client_address):
        pass  # refused handshakes, dropped connections: on purpose


def _serve(context=None):
    server = _Server(('127.0.0.1', 0), _Handler)
    if context is not None:
        # The handshake happens in the handler's thread, at its first read.
        server.socket = context.wrap_socket(
            server.socket, server_side=True, do_handshake_on_connect=False)
    server.agent = FakeAgent()
    server.agent.url = '%s://127.0.0.1:%d' % (
        'https' if context else 'http', server.server_address[1])
    thread = threading.Thread(target=server.serve_forever,
                              kwargs={'poll_interval': 0.01}, daemon=True)
    thread.start()
    return server, thread


def _stop(server, thread):
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def agent():
    server, thread = _serve()
    yield server.agent
    _stop(server, thread)


class Pace:
    """The injected sleep and clock: sleeping moves the clock; ``then``
    runs a callback at the n-th sleep (a command finishing meanwhile)."""

    def __init__(self):
        self.now = 1000.0
        self.sleeps = []
        self.then = {}

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds
        action = self.then.pop(len(self.sleeps), None)
        if action:
            action()

    def clock(self):
        return self.now


@pytest.fixture
def pace():
    return Pace()


@pytest.fixture
def client(conf, pace):
    conf.set_override('command_timeout', 5.0, group='agent')
    made = client_mod.AgentClient(conf, sleep=pace.sleep, clock=pace.clock)
    yield made
    made.close()


def _ep(agent, token=TOKEN, ca_pem=None, url=None):
    return client_mod.Endpoint(node='node-1', url=url or agent.url,
                               token=token, ca_pem=ca_pem)


def _closed_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


# ---- happy paths -----------------------------------------------------------

def test_status_is_read_without_the_token(client, agent):
    assert client.status(_ep(agent)) == {'started_at': 1.5,
                                         'version': '13.0.0'}
    assert agent.seen == [('GET', '/v1/status', {})]


def test_run_sends_the_token_and_returns_the_finished_command(client, agent):
    command = client.run(_ep(agent), 'deploy.get_deploy_steps',
                         {'node': {'uuid': 'node-1'}, 'ports': []})
    assert (command.name, command.status, command.done) == (
        'get_deploy_steps', 'SUCCEEDED', True)
    assert command.result == {'params': {'node': {'uuid': 'node-1'},
                                         'ports': []}}
    assert agent.seen == [('POST', '/v1/commands/',
                           {'wait': 'true', 'agent_token': TOKEN})]


def test_start_get_last_command_and_wait(client, agent, pace):
    agent.running.add('execute_deploy_step')
    ep = _ep(agent)
    assert client.last_command(ep) is None
    started = client.start(ep, 'deploy.execute_deploy_step', {'step': {}})
    assert (started.status, started.done) == ('RUNNING', False)
    assert agent.seen[-1][2] == {'wait': 'false', 'agent_token': TOKEN}
    assert client.get(ep, started.id) == started
    assert client.last_command(ep) == started
    pace.then[2] = lambda: agent.finish(started.id)
    done = client.wait(ep, started, timeout=60)
    assert (done.id, done.status) == (started.id, 'SUCCEEDED')
    assert pace.sleeps == [0.5, 0.5]  # [agent]command_poll_interval


def test_wait_returns_a_failed_or_mismatched_command(client, agent, pace):
    agent.running.add('execute_clean_step')
    ep = _ep(agent)
    started = client.start(ep, 'clean.execute_clean_step', {})
    pace.then[1] = lambda: agent.finish(started.id, 'CLEAN_VERSION_MISMATCH')
    assert client.wait(ep, started, 10).status == 'CLEAN_VERSION_MISMATCH'
    agent.fail['execute_clean_step'] = DISK_GONE
    assert client.start(ep, 'clean.execute_clean_step', {}).status == (
        'FAILED')


def test_a_failed_command_raises_with_the_agents_message(client, agent):
    agent.fail['get_deploy_steps'] = DISK_GONE
    with pytest.raises(errors.AgentCommandFailed) as caught:
        client.run(_ep(agent), 'deploy.get_deploy_steps', {})
    assert str(caught.value) == (
        'Command deploy.get_deploy_steps failed on the agent of node '
        'node-1: Command execution failed: Error performing deploy_step '
        'write_image: /dev/sda is gone')
    assert caught.value.code == 409
    assert caught.value.result.error == DISK_GONE


@pytest.mark.parametrize('error,expected', [
    ('plain words', 'plain words'),
    ({'message': 'Only a message'}, 'Only a message'),
    ({'details': 'only details\n  on two lines'},
     'only details on two lines'),
    ({'type': 'VersionMismatch'}, 'VersionMismatch'),
    (None, 'the agent gave no reason'),
])
def test_the_message_of_a_command(error, expected):
    command = client_mod.Command('1', 'x', 'FAILED', error=error)
    assert command.message() == expected


def test_the_message_is_bounded():
    text = client_mod.Command('1', 'x', 'FAILED', 'y' * 5000).message()
    assert len(text) == 500 and text.endswith('...')


def test_the_endpoint_repr_hides_the_token_and_ca():
    ep = client_mod.Endpoint('node-1', 'https://h:9999', TOKEN, 'PEM')
    assert TOKEN not in repr(ep) and 'PEM' not in repr(ep)


# ---- refusals and errors ---------------------------------------------------

def test_a_refused_token_is_not_retried(client, agent, pace):
    with pytest.raises(errors.AgentTokenRefused) as caught:
        client.run(_ep(agent, token='wrong-token'), 'standby.sync', {})
    assert agent.posts == 1 and pace.sleeps == []
    assert agent.url in str(caught.value) and caught.value.code == 409
    assert 'wrong-token' not in str(caught.value)


def test_a_busy_agent_is_asked_again(client, agent, pace):
    agent.busy = 2
    assert client.run(_ep(agent), 'standby.sync', {}).status == 'SUCCEEDED'
    assert agent.posts == 3 and pace.sleeps == [1.0, 1.0]


def test_an_agent_busy_on_every_attempt(client, agent, pace):
    agent.busy = 5
    with pytest.raises(errors.AgentBusy) as caught:
        client.start(_ep(agent), 'deploy.execute_deploy_step', {})
    assert agent.posts == 3 and len(agent.commands) == 0
    assert 'executing command execute_deploy_step' in str(caught.value)
    assert caught.value.code == 409


def test_a_closed_port_is_unreachable_after_every_attempt(client, conf,
                                                          pace):
    conf.set_override('max_command_attempts', 4, group='agent')
    url = 'http://127.0.0.1:%d' % _closed_port()
    ep = client_mod.Endpoint('node-1', url, TOKEN)
    with pytest.raises(errors.AgentUnreachable) as caught:
        client.run(ep, 'deploy.get_deploy_steps', {})
    assert pace.sleeps == [1.0, 1.0, 1.0]
    message = str(caught.value)
    assert caught.value.code == 503 and caught.value.attempts == 4
    assert url in message and 'deploy.get_deploy_steps' in message
    assert 'did not answer' in message
    with pytest.raises(errors.AgentUnreachable, match='GET /v1/commands/'):
        client.last_command(ep)


def test_a_dropped_get_is_read_again(client, agent, pace):
    agent.add('get_deploy_steps')
    agent.drop_get = 1
    assert client.last_command(_ep(agent)).name == 'get_deploy_steps'
    assert pace.sleeps == [1.0]


@pytest.mark.parametrize('status', [400, 404, 500])
def test_an_http_error_carries_the_faultstring(client, agent, status):
    agent.raw = (status, {'faultcode': 'Server', 'faultstring': 'Boom! '
                          + 'x' * 2000})
    with pytest.raises(errors.AgentError) as caught:
        client.run(_ep(agent), 'deploy.get_deploy_steps', {})
    assert caught.value.status == status
    assert 'HTTP %d: Boom! xxx' % status in str(caught.value)
    assert len(str(caught.value)) < 700


def test_an_unknown_command_id(client, agent):
    with pytest.raises(errors.AgentError, match='Not found: Command Result'):
        client.get(_ep(agent), 'no-such-id')


@pytest.mark.parametrize('body,call,expected', [
    (b'<html>oops</html>', 'run', 'is not JSON: <html>oops</html>'),
    ({'id': 1, 'command_name': 'x'}, 'run', 'no command result'),
    ({'id': '1', 'command_name': 'x', 'command_status': 'DONE?'}, 'run',
     'unknown command_status DONE?'),
    ({'commands': 'none'}, 'last_command', 'no "commands" list'),
    ([1, 2], 'status', 'no JSON object'),
])
def test_an_answer_that_is_no_command(client, agent, body, call, expected):
    agent.raw = (200, body)
    ep = _ep(agent)
    calls = {'run': lambda: client.run(ep, 'standby.sync', {}),
             'last_command': lambda: client.last_command(ep),
             'status': lambda: client.status(ep)}
    with pytest.raises(errors.AgentError) as caught:
        calls[call]()
    assert expected in str(caught.value)
    assert 'node-1' in str(caught.value)


# ---- a lost answer: no second send -----------------------------------------

def test_a_running_command_whose_answer_was_lost(client, agent, pace):
    agent.running.add('execute_deploy_step')
    agent.drop_after = 1
    command = client.start(_ep(agent), 'deploy.execute_deploy_step', {})
    assert command.status == 'RUNNING'
    assert agent.posts == 1 and len(agent.commands) == 1
    assert pace.sleeps == []


def test_run_waits_for_a_command_whose_answer_timed_out(client, conf, agent,
                                                        pace):
    conf.set_override('command_timeout', 0.2, group='agent')
    agent.running.add('install_bootloader')
    agent.slow = 1.0  # longer than command_timeout: a read timeout
    pace.then[1] = lambda: agent.finish(list(agent.commands)[0])
    command = client.run(_ep(agent), 'image.install_bootloader', {})
    assert command.status == 'SUCCEEDED' and agent.posts == 1
    # Polled, within [agent]command_timeout again.
    assert pace.sleeps == [pytest.approx(0.2)]


def test_a_finished_command_whose_answer_was_lost(client, agent):
    ep = _ep(agent)
    first = client.run(ep, 'deploy.get_deploy_steps', {})
    agent.drop_after = 1
    second = client.run(ep, 'deploy.get_deploy_steps', {})
    assert second.id != first.id
    assert agent.posts == 2 and len(agent.commands) == 2


def test_an_earlier_command_of_that_name_is_not_taken_for_the_lost_one(
        client, agent, pace):
    ep = _ep(agent)
    first = client.run(ep, 'deploy.execute_deploy_step', {'step': 'a'})
    agent.drop_before = 1  # the second never reaches the agent
    second = client.run(ep, 'deploy.execute_deploy_step', {'step': 'b'})
    assert second.id != first.id
    assert second.result == {'params': {'step': 'b'}}
    assert agent.posts == 3 and len(agent.commands) == 2
    assert pace.sleeps == [1.0]


def test_without_memory_a_finished_command_is_sent_again(client, agent):
    # A new client (a conductor restarted) cannot tell whether a finished
    # command of that name is the one it sent: it sends it again.
    agent.add('get_deploy_steps')
    agent.drop_after = 1
    client.run(_ep(agent), 'deploy.get_deploy_steps', {})
    assert agent.posts == 2 and len(agent.commands) == 3


def test_wait_gives_up_after_its_timeout(client, agent, pace):
    agent.running.add('execute_deploy_step')
    ep = _ep(agent)
    started = client.start(ep, 'deploy.execute_deploy_step', {})
    with pytest.raises(errors.AgentTimeout) as caught:
        client.wait(ep, started, timeout=1.2)
    assert pace.sleeps == [0.5, 0.5, pytest.approx(0.2)]
    assert caught.value.code == 503
    assert str(caught.value) == (
        'Command execute_deploy_step (%s) on the agent of node node-1 did '
        'not finish within 1.2 seconds; it may still be running on the '
        'agent.' % started.id)


# ---- TLS -------------------------------------------------------------------

@pytest.fixture(scope='module')
def ca():
    try:
        import trustme
    except ImportError:
        require_real('trustme')
    authority = trustme.CA()
    return {'ca': authority, 'pem': authority.cert_pem.bytes().decode(),
            'other': trustme.CA().cert_pem.bytes().decode()}


@pytest.fixture
def tls_agent(ca, request):
    names = getattr(request, 'param', ('127.0.0.1', 'localhost'))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca['ca'].issue_cert(*names).configure_cert(context)
    server, thread = _serve(context)
    yield server.agent
    _stop(server, thread)


def test_https_verified_against_the_agents_ca(client, tls_agent, ca):
    ep = _ep(tls_agent, ca_pem=ca['pem'])
    assert client.run(ep, 'standby.sync', {}).status == 'SUCCEEDED'
    assert client.status(ep)['version'] == '13.0.0'
    localhost = tls_agent.url.replace('127.0.0.1', 'localhost')
    assert client.status(_ep(tls_agent, ca_pem=ca['pem'], url=localhost))


@pytest.mark.parametrize('which', ['other', None])
def test_https_refused_with_another_ca(client, tls_agent, ca, pace, which):
    # None: the default bundle, which does not hold trustme's CA.
    ep = _ep(tls_agent, ca_pem=ca[which] if which else None)
    with pytest.raises(errors.AgentTLSError) as caught:
        client.run(ep, 'standby.sync', {})
    message = str(caught.value)
    assert 'certificate verify failed' in message or 'issuer' in message
    assert 'agent_verify_ca' in message and tls_agent.url in message
    assert tls_agent.posts == 0 and pace.sleeps == []


@pytest.mark.parametrize('tls_agent', [('agent.example.com',)],
                         indirect=True)
def test_https_refused_for_a_certificate_of_another_host(client, tls_agent,
                                                         ca):
    with pytest.raises(errors.AgentTLSError, match='127.0.0.1'):
        client.status(_ep(tls_agent, ca_pem=ca['pem']))


def test_a_ca_that_is_no_pem(client, tls_agent):
    with pytest.raises(errors.AgentTLSError, match='no PEM certificate'):
        client.status(_ep(tls_agent, ca_pem='not a certificate'))


def test_one_client_serves_agents_of_two_cas_from_many_threads(
        client, tls_agent, ca, monkeypatch):
    # One adapter kept: every switch of CA evicts (closes) the other's.
    monkeypatch.setattr(client_mod, '_ADAPTERS', 1)
    other = type(ca['ca'])()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    other.issue_cert('127.0.0.1').configure_cert(context)
    server, thread = _serve(context)
    eps = [_ep(tls_agent, ca_pem=ca['pem']),
           _ep(server.agent, ca_pem=other.cert_pem.bytes().decode())]
    failures = []

    def work(index):
        try:
            for turn in range(10):
                client.run(eps[(index + turn) % 2], 'standby.sync', {})
        except Exception as exc:
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    try:
        for worker in threads:
            worker.start()
        for worker in threads:
            worker.join(30)
    finally:
        _stop(server, thread)
    assert failures == []
    assert tls_agent.posts + server.agent.posts == 60


# ---- the token is never told -----------------------------------------------

def test_the_token_is_in_no_message_and_no_log_line(client, conf, agent, ca,
                                                    tls_agent, pace, caplog):
    caplog.set_level(logging.DEBUG)
    raised = []

    def expect(call, *args):
        with pytest.raises(errors.AgentError) as caught:
            call(*args)
        raised.append(caught.value)

    ep = _ep(agent)
    command = 'deploy.execute_deploy_step'
    expect(client.run, _ep(agent, token=TOKEN + 'x'), command, {})
    agent.busy = 3
    expect(client.run, ep, command, {})
    agent.fail['execute_deploy_step'] = {'message': 'leaked ' + TOKEN}
    expect(client.run, ep, command, {})
    agent.running.add('install_bootloader')
    started = client.start(ep, 'image.install_bootloader', {})
    expect(client.wait, ep, started, 1)
    agent.drop_after, agent.drop_get = 3, 3  # answers lost, list unread
    expect(client.start, ep, command, {})
    agent.drop_get = 0
    for body in ({'faultstring': 'echo ' + TOKEN}, b'echo ' + TOKEN.encode()):
        agent.raw = (500, body)
        expect(client.run, ep, command, {})
        expect(client.get, ep, started.id)
    agent.raw = (200, {'id': TOKEN})
    expect(client.run, ep, command, {})
    closed = 'http://127.0.0.1:%d' % _closed_port()
    expect(client.run, _ep(agent, url=closed), command, {})
    expect(client.last_command, _ep(agent, url=closed))
    expect(client.run, _ep(tls_agent, ca_pem=ca['other']), command, {})
    expect(client.status, _ep(tls_agent, ca_pem='junk'))

    assert len(raised) == 14
    assert {type(exc).__name__ for exc in raised} == {
        'AgentTokenRefused', 'AgentBusy', 'AgentCommandFailed',
        'AgentTimeout', 'AgentUnreachable', 'AgentError', 'AgentTLSError'}
    for exc in raised:
        assert TOKEN not in str(exc) and TOKEN not in repr(exc)
        # result: the agent's own record of a failed command, as it is.
        assert TOKEN not in repr({key: value for key, value
                                  in exc.kwargs.items() if key != 'result'})
    records = [record.getMessage() for record in caplog.records]
    assert [line for line in records if TOKEN in line] == []
    # urllib3 logs the request lines, query included: redacted.
    assert any('agent_token=***' in line for line in records)
