# SPDX-License-Identifier: Apache-2.0
"""Options of the [agent] group: how a conductor talks to the
ironic-python-agent running on a node (:mod:`ferrum.drivers.agent.client`)
and which agents' heartbeats it accepts.

Every option is read when a command is sent or polled, so a test's
override takes effect at the next call.
"""

from oslo_config import cfg

GROUP = 'agent'

opts: list[cfg.Opt] = [
    cfg.FloatOpt('command_timeout', default=60.0, min=0.1,
                 help='Seconds to wait for the agent\'s answer to one '
                      'request. The agent answers a command sent with '
                      'wait=true only once it has finished, so such a '
                      'command must finish within this too (when its '
                      'answer is lost, the conductor polls it for as long '
                      'again). A request that times out counts as one '
                      'attempt of max_command_attempts.'),
    cfg.IntOpt('max_command_attempts', default=3, min=1,
               help='Times one request to the agent is sent before the '
                    'agent counts as unreachable (no connection, a reset '
                    'or a timeout) or as busy (it answered 409 because '
                    'its previous command still runs). 1 sends each '
                    'request once. A command whose connection was lost '
                    'is sent again only when the agent\'s last command '
                    'shows it did not arrive.'),
    cfg.FloatOpt('command_retry_interval', default=1.0, min=0.0,
                 help='Seconds between two attempts of one request to the '
                      'agent (see max_command_attempts). 0 tries again at '
                      'once.'),
    cfg.FloatOpt('command_poll_interval', default=0.5, min=0.01,
                 help='Seconds between two reads of a command still running '
                      'on the agent while the conductor waits for it to '
                      'finish, instead of waiting for the agent\'s next '
                      'heartbeat.'),
    cfg.BoolOpt('require_tls', default=True,
                help='When true, a heartbeat whose callback_url is plain '
                     'http:// is refused, as Ironic\'s [agent]require_tls '
                     'refuses it, so that the agent token and the node\'s '
                     'data go to the agent only over HTTPS. An agent '
                     'started with the API at microversion 1.68 or later '
                     'serves HTTPS with a certificate of its own, which '
                     'it sends in its heartbeat (agent_verify_ca). Set it '
                     'to false only for an agent that cannot serve TLS.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {GROUP: opts}
