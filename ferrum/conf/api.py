# SPDX-License-Identifier: Apache-2.0
"""Options of the REST API: [api] (serving, paging, links) and its auth.

The two authentication options live in [DEFAULT], where Ironic keeps them,
so an operator's existing ``auth_strategy`` line carries over unchanged.
"""

from oslo_config import cfg

GROUP = 'api'

#: Registered in [DEFAULT], as in Ironic.
auth_opts: list[cfg.Opt] = [
    cfg.StrOpt('auth_strategy', default='noauth',
               choices=[('noauth', 'No authentication: every request is '
                                   'served. Only safe on a loopback '
                                   'address, see [api] '
                                   'allow_non_loopback_noauth.'),
                        ('http_basic', 'HTTP Basic authentication against '
                                       'the bcrypt htpasswd file named by '
                                       'http_basic_auth_user_file.'),
                        ('keystone', 'Keystone tokens, validated by '
                                     'keystonemiddleware as configured in '
                                     '[keystone_authtoken]; the policy '
                                     '([oslo_policy] policy_file over '
                                     "Ironic's defaults) decides what each "
                                     'project and role may do.')],
               help='How API requests are authenticated. With every '
                    'strategy the version discovery documents at / and /v1 '
                    "and the ramdisk agent's lookup and heartbeat stay "
                    'public, as in Ironic. Under noauth and http_basic '
                    'every caller is a system administrator and the policy '
                    'is not consulted, as in Ironic.'),
    cfg.StrOpt('http_basic_auth_user_file', default='/etc/ferrum/htpasswd',
               help='The htpasswd file of the API users when auth_strategy '
                    'is http_basic: one "user:hash" line per user, with '
                    'bcrypt hashes only ("htpasswd -B" makes them). The API '
                    'refuses to start when the file is missing or has a '
                    'malformed line, and re-reads it whenever it changes '
                    'on disk.'),
    cfg.BoolOpt('rbac_service_role_elevated_access', default=False,
                help='Under auth_strategy = keystone, give a token with the '
                     '"service" role in the project named by '
                     'rbac_service_project_name (nova\'s and an inspector\'s '
                     'service users) the rights of a system member and '
                     'reader (the policy\'s "service_role" rule), as Ironic '
                     'does with the same option. Off, as Ironic\'s default: '
                     'such a token is a user of its own project only.'),
    cfg.StrOpt('rbac_service_project_name', default='service',
               help='The project whose "service" role users get elevated '
                    'access when rbac_service_role_elevated_access is set; '
                    'also the only project whose "service" role users may '
                    'call conductors under [json_rpc] auth_strategy = '
                    'keystone.'),
]

opts: list[cfg.Opt] = [
    cfg.IntOpt('ramdisk_heartbeat_timeout', default=300, min=1,
               help='Seconds within which a ramdisk agent should send its '
                    'next heartbeat, as the lookup tells it (Ironic\'s '
                    'option of the same name). The agent heartbeats every '
                    '0.3 to 0.6 times this, and at once after each command '
                    'it finishes; ferrum does not wait for heartbeats to '
                    'move a node on, so lowering it only makes a silent '
                    'agent noticed sooner.'),
    cfg.HostAddressOpt('host_ip', default='127.0.0.1',
                       help='The IP address or host name the API listens '
                            'on. With auth_strategy noauth only a loopback '
                            'address is accepted unless '
                            'allow_non_loopback_noauth is set.'),
    cfg.PortOpt('port', default=6385,
                help='The TCP port the API listens on. 0 lets the kernel '
                     'pick a free port (the log says which), which is only '
                     'useful for tests.'),
    cfg.BoolOpt('allow_non_loopback_noauth', default=False,
                help='Serve the API on a non-loopback host_ip although '
                     'auth_strategy is noauth. Anyone who can reach the '
                     'address can then enroll, power and deploy every '
                     'node, so only set this behind a proxy that '
                     'authenticates, or on an isolated network.'),
    cfg.IntOpt('threads', default=16, min=1,
               help='Number of threads serving API requests at once. A '
                    'request that waits for a node lock holds its thread '
                    'for up to [conductor] node_locked_retry_attempts times '
                    'node_locked_retry_interval seconds; further requests '
                    'wait in the listen queue.'),
    cfg.IntOpt('max_limit', default=1000, min=1,
               help='The largest number of items one list request returns. '
                    'A larger "limit" query parameter is reduced to it, and '
                    'the response links the next page.'),
    cfg.IntOpt('max_json_body_size', default=1024, min=4, mutable=True,
               help='Largest request body accepted, in KiB (1 MiB by '
                    'default, as in Ironic). A larger body is refused with '
                    'HTTP 413 before it is read, from its Content-Length, or '
                    'as soon as a body without one grows past the limit. '
                    'The provision-state endpoint has its own limit, '
                    'max_json_body_size_provision.'),
    cfg.IntOpt('max_json_body_size_provision', default=65536, min=4,
               mutable=True,
               help='Largest body of PUT /v1/nodes/{node}/states/provision, '
                    'in KiB (64 MiB by default, as in Ironic): it may carry '
                    'a config drive.'),
    cfg.IntOpt('max_json_body_depth', default=25, min=8, max=50,
               mutable=True,
               help='Deepest nesting of arrays and objects accepted in a '
                    'JSON request body (25 by default, as in Ironic; the '
                    'deepest legitimate body, a config drive\'s network '
                    'data, is about 7). Deeper bodies are refused with HTTP '
                    '400 by a scan of the raw bytes before any parser '
                    'runs. At most 50: conductors refuse JSON-RPC calls '
                    'nested deeper than 64 levels.'),
    cfg.IntOpt('max_json_body_values', default=10000, min=100,
               max=100000, mutable=True,
               help='Most JSON values (object keys included) accepted in a '
                    'request body, on every endpoint, the provision-state '
                    'one included (a config drive string is one value). '
                    'Real requests hold far fewer: a node or port create '
                    'some tens, a PATCH of the most operations accepted '
                    '(500) about 3,500, a config drive given as meta_data '
                    'and network_data a few thousand at most. A body with '
                    'more is refused with HTTP 400 by the same scan of the '
                    'raw bytes as max_json_body_depth, before the parser '
                    'builds an object of it: a 1 MiB body of short '
                    'strings holds some 300,000, and the parser\'s many '
                    'small objects fragment the API\'s memory. The fields a '
                    'PATCH changes are bounded the same way. There is no '
                    '0 (no bound): at most 100,000, because conductors '
                    'refuse JSON-RPC calls holding more than 200,000.'),
    cfg.BoolOpt('project_admin_can_manage_own_nodes', default=True,
                mutable=True,
                help='Let a project-scoped administrator create nodes '
                     'owned by its project and delete the nodes its '
                     'project owns (Ironic\'s option and default, API '
                     '1.80), under the rules '
                     'baremetal:node:create:self_owned_node and '
                     'baremetal:node:delete:self_owned_node. Unset, only '
                     'baremetal:node:create and baremetal:node:delete (a '
                     'system administrator) decide.'),
    cfg.URIOpt('public_endpoint', schemes=['http', 'https'],
               help='Base URL, such as https://baremetal.example.com:6385, '
                    'that API responses use in their links instead of the '
                    'URL the request was sent to. Set it when clients reach '
                    'the API through a proxy or load balancer. Unset, links '
                    'use the request\'s own host URL.'),
    cfg.BoolOpt('enable_ssl_api', default=False,
                help='Serve the API over HTTPS only, with the certificate '
                     'and key of [ssl] cert_file and key_file (and client '
                     'certificates required when [ssl] ca_file is set). '
                     'Plain HTTP requests are then refused. Leave it unset '
                     'when a proxy in front terminates TLS (then set '
                     'public_endpoint to its https URL), or when another '
                     'WSGI server runs ferrum.api.wsgi:application.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(auth_opts)
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {'DEFAULT': auth_opts, GROUP: opts}
