# SPDX-License-Identifier: Apache-2.0
"""Options of the [oneview] group: the appliance the ``oneview`` hardware
type talks to, and its dynamic-allocation periodic tasks.

Connection options are read when the conductor first talks to the
appliance (a changed value builds a new client); the periodic ones when the
conductor starts its periodic worker.
"""

from oslo_config import cfg

GROUP = 'oneview'

opts: list[cfg.Opt] = [
    cfg.StrOpt('manager_url',
               help='Address of the OneView appliance, as host or host:port '
                    '(e.g. oneview.example.com or 10.0.0.5:443). A URL such '
                    'as https://oneview.example.com/ is accepted and reduced '
                    'to its host and port. Required when the oneview '
                    'hardware type is enabled.'),
    cfg.StrOpt('username',
               help='OneView user name the conductor logs in with. The user '
                    'needs rights on server hardware and server profiles.'),
    cfg.StrOpt('password', secret=True,
               help='Password of the OneView user. Never logged.'),
    cfg.StrOpt('tls_cacert_file',
               help='Path of a PEM file with the CA certificate(s) that '
                    'signed the appliance\'s TLS certificate. Required '
                    'unless allow_insecure_connections is true. Note that '
                    'the OneView client library checks the certificate '
                    'chain but not the host name.'),
    cfg.BoolOpt('allow_insecure_connections', default=False,
                help='Talk to the appliance without checking its TLS '
                     'certificate at all. Only for test appliances: anyone '
                     'on the path can then read the OneView password. When '
                     'true, tls_cacert_file is ignored.'),
    cfg.FloatOpt('request_timeout', default=60.0, min=1.0,
                 help='Seconds to wait for the appliance to answer one HTTP '
                      'request (connect, send and each read). A request '
                      'that takes longer fails the operation with a '
                      '"OneView unreachable" error.'),
    cfg.IntOpt('task_timeout', default=600, min=0,
               help='Seconds to wait for an asynchronous OneView task '
                    '(applying or removing a server profile, a power '
                    'change) to finish. Applying a profile usually takes '
                    'under 2 minutes; raise this when profiles update '
                    'firmware. 0 means wait without limit. A timed-out task '
                    'is not cancelled in OneView; the node goes to a '
                    'failure state.'),
    cfg.IntOpt('api_version', default=800, min=120,
               help='OneView REST API version sent in every request '
                    '(X-API-Version). 800 matches OneView 4.0 and later.'),
    cfg.BoolOpt('enable_periodic_tasks', default=True,
                help='Run the three dynamic-allocation periodic tasks: '
                     'nodes whose hardware OneView took while available go '
                     'to maintenance and manageable; nodes whose hardware '
                     'was freed are provided again (and so cleaned); nodes '
                     'whose cleaning failed because OneView had the '
                     'hardware go to maintenance and manageable.'),
    cfg.IntOpt('periodic_check_interval', default=300, min=0,
               help='Seconds between two runs of each dynamic-allocation '
                    'periodic task. Each run lists the server hardware in '
                    'pages of page_size, whatever the number of nodes. 0 '
                    'disables the tasks.'),
    cfg.IntOpt('page_size', default=500, min=1, max=10000,
               help='Server hardware entries asked for per list request by '
                    'the periodic tasks and the migration tool: a run over '
                    'N servers makes N / page_size requests, rounded up.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {GROUP: opts}
