# SPDX-License-Identifier: Apache-2.0
"""What a failed call to a node's agent becomes: ferrum exceptions with a
status.

:mod:`ferrum.drivers.agent.client` turns every failure of a request to
ironic-python-agent into one of these (nothing of requests' reaches the
rest of the package). Each class's ``code`` is the HTTP status a client
gets when the API waits for the call: 409 means the agent refused or
failed in its current state (or is not the agent ferrum knows), 503 that
it may answer later. Every instance has ``node`` and ``command``
attributes; none carries the agent token, in its text or its attributes.
"""

from ferrum.common import exception


class AgentError(exception.DriverError):
    """409: the agent answered with an error, or with something that is not
    a command result.

    :ivar status: the HTTP status the agent answered, when it did.
    """

    code = 409
    msg_fmt = ('The agent of node %(node)s failed %(command)s: %(reason)s')


class AgentUnreachable(AgentError):
    """503: no answer (refused, reset or timed out) after every attempt."""

    code = 503
    msg_fmt = ('The agent of node %(node)s at %(url)s did not answer '
               '%(command)s after %(attempts)d attempt(s): %(reason)s. '
               'Check that the node is powered on and running the agent, '
               'and that this conductor can reach that address.')


class AgentTLSError(AgentError):
    """409: the agent's TLS certificate is not the one it announced."""

    msg_fmt = ('The TLS certificate of the agent of node %(node)s at '
               '%(url)s is not trusted (%(command)s): %(reason)s. It must '
               'be signed by the certificate authority of the agent\'s '
               'heartbeat (agent_verify_ca) and name the host of its '
               'callback URL; another machine may answer at that address, '
               'or the agent restarted with a new certificate: reboot the '
               'node into the agent.')


class AgentTokenRefused(AgentError):
    """409: the agent refused ferrum's token (its 401): it is not the agent
    that received the token at lookup. Not retried."""

    msg_fmt = ('The agent of node %(node)s at %(url)s refused the agent '
               'token for %(command)s: the agent restarted, or another '
               'agent answers at that address. Reboot the node into the '
               'agent so that it looks the node up again.')


class AgentBusy(AgentError):
    """409: the agent still runs an earlier command (its AgentIsBusy)."""

    msg_fmt = ('The agent of node %(node)s did not start %(command)s after '
               '%(attempts)d attempt(s): %(reason)s. Retry once its '
               'current command has finished.')


class AgentCommandFailed(AgentError):
    """409: the command ran and FAILED on the agent.

    :ivar reason: the agent's own error text (:meth:`Command.message`).
    :ivar result: the failed :class:`~ferrum.drivers.agent.client.Command`.
    """

    msg_fmt = ('Command %(command)s failed on the agent of node %(node)s: '
               '%(reason)s')


class AgentTimeout(AgentError):
    """503: the command still runs on the agent after the caller's limit.

    :ivar command_id: the agent's id of the command, to read it later.
    :ivar seconds: how long the conductor waited.
    """

    code = 503
    msg_fmt = ('Command %(command)s (%(command_id)s) on the agent of node '
               '%(node)s did not finish within %(seconds)s seconds; it may '
               'still be running on the agent.')
