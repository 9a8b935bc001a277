# SPDX-License-Identifier: Apache-2.0
"""Options of the [redfish] group: how the ``redfish`` hardware type talks
to BMCs through sushy.

Every option is read when a connection is made, a power change waits or a
task monitor is polled, so a test's override takes effect at the next use
(the polling interval when the periodic worker starts).
"""

from oslo_config import cfg

GROUP = 'redfish'

opts: list[cfg.Opt] = [
    cfg.FloatOpt('connect_timeout', default=5.0, min=0.1,
                 help='Seconds to wait for a BMC to accept a connection. '
                      'sushy tries a connection server_side_retries times '
                      '(3 when that is 0), so a silent BMC holds a '
                      'conductor worker for about that many times this.'),
    cfg.FloatOpt('request_timeout', default=30.0, min=0.1,
                 help='Seconds to wait for a BMC\'s answer to one request. '
                      'sushy tries a request that timed out again as it '
                      'does a connection (see connect_timeout), so a BMC '
                      'that never answers holds a worker for about '
                      'server_side_retries times this, plus the delays.'),
    cfg.IntOpt('server_side_retries', default=2, min=0,
               help='Times a request the BMC answered with a 5xx error is '
                    'tried again before the BMC counts as unavailable.'),
    cfg.FloatOpt('server_side_retries_delay', default=1.0, min=0.0,
                 help='Seconds between those tries.'),
    cfg.IntOpt('connection_cache_size', default=1000, min=1,
               help='Sessions with BMCs kept open and reused, at most one '
                    'per BMC address, user and TLS verification; the least '
                    'recently used is dropped when a new one would exceed '
                    'this.'),
    cfg.FloatOpt('power_poll_interval', default=1.0, min=0.01,
                 help='Seconds between two power-state reads while waiting '
                      'for a power change to take effect (BMCs acknowledge '
                      'a reset long before the machine reaches the state).'),
    cfg.FloatOpt('task_poll_interval', default=30.0, min=0.0,
                 help='Seconds between two runs of the periodic task that '
                      'reads the task monitors of BMC operations still '
                      'running (a BMC that answers an operation with 202 '
                      'and a task monitor: the node waits in "clean wait", '
                      '"wait call-back" or "inspect wait" meanwhile). A '
                      'node is read less often when its BMC asks so '
                      '(Retry-After). 0 disables the task: such nodes then '
                      'wait until the [conductor] callback timeout of '
                      'their state fails them.'),
    cfg.IntOpt('task_timeout', default=1800, min=0,
               help='Seconds a node may wait for one BMC task (from the '
                    'BMC\'s 202 answer) before the task counts as failed '
                    'and the node fails with a message naming this '
                    'option. The BMC is read once more first, so a task '
                    'that finished meanwhile is not failed. 0 sets no '
                    'limit of its own; the [conductor] callback timeout '
                    'of the wait state (clean_callback_timeout, '
                    'deploy_callback_timeout, inspect_wait_timeout) still '
                    'applies, whichever comes first.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {GROUP: opts}
