# SPDX-License-Identifier: Apache-2.0
"""Options of the RPC between API and conductors: the transport and [json_rpc].

``[DEFAULT] rpc_transport`` chooses how ``ferrum-api`` reaches conductors;
the [json_rpc] group configures the HTTP endpoint each ``ferrum-conductor``
serves and the API's calls to it.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'json_rpc'

#: Registered in [DEFAULT], as in Ironic.
transport_opts: list[cfg.Opt] = [
    cfg.StrOpt('rpc_transport', default='local',
               choices=[('local', 'ferrum-api runs its own conductor in '
                                  'the same process and calls it directly.'),
                        ('json-rpc', 'ferrum-api runs no conductor: it calls '
                                     'the ferrum-conductor processes over '
                                     'JSON-RPC on HTTP, and each of them '
                                     'serves that endpoint.')],
               help='How the API reaches conductors. The all-in-one "ferrum" '
                    'command always uses local. Set json-rpc on ferrum-api '
                    'and on every ferrum-conductor to run them as separate '
                    'processes or hosts sharing one database.'),
    cfg.IntOpt('hash_ring_reset_interval', default=15, min=0,
               help='Seconds the API keeps its view of the live conductors '
                    '(the hash rings that route nodes to them, and the '
                    'conductor each node shows in its "conductor" field) '
                    'before reading the conductors table again. A conductor '
                    'that refuses the connection or is stopping, or a driver '
                    'no known conductor runs, triggers an immediate re-read. '
                    '0 re-reads on every call.'),
]

opts: list[cfg.Opt] = [
    cfg.HostAddressOpt('host_ip', default='127.0.0.1',
                       help='The IP address or host name the conductor\'s '
                            'JSON-RPC endpoint listens on; the API calls '
                            'http://host_ip:port, so it must be reachable '
                            'from the API hosts. With auth_strategy noauth '
                            'only a loopback address is accepted unless '
                            'allow_non_loopback_noauth is set.'),
    cfg.PortOpt('port', default=8089,
                help='The TCP port the conductor\'s JSON-RPC endpoint '
                     'listens on. 0 lets the kernel pick a free port, which '
                     'the conductor then registers; only useful for tests.'),
    cfg.BoolOpt('allow_non_loopback_noauth', default=False,
                help='Serve the conductor\'s JSON-RPC endpoint on a '
                     'non-loopback host_ip although auth_strategy is '
                     'noauth. Anyone who can reach the address can then '
                     'drive every node this conductor manages, so only set '
                     'this on a network that only the API hosts reach. '
                     'Unset, such a conductor refuses to start.'),
    cfg.IntOpt('threads', default=16, min=1,
               help='Number of threads serving JSON-RPC calls at once in a '
                    'conductor. A call waiting for a node lock holds its '
                    'thread; further calls wait in the listen queue.'),
    cfg.IntOpt('timeout', default=60, min=1,
               help='Seconds the API waits for a conductor to answer one '
                    'JSON-RPC call, once connected, before answering its '
                    'client 503. Calls that start long work return once '
                    'the work is handed to a worker (and [conductor] '
                    'action_wait_timeout has passed), so this only needs '
                    'to cover lock retries and short driver calls.'),
    cfg.FloatOpt('connect_timeout', default=5.0, min=0.1,
                 help='Seconds the API waits for a conductor to accept a '
                      'connection. A conductor host that is down or cut '
                      'off drops connection attempts silently; after this '
                      'long the call, which the conductor never received, '
                      'goes to the conductor that owns the node without '
                      'it, as when the connection is refused.'),
    cfg.StrOpt('auth_strategy', default='noauth',
               choices=[('noauth', 'Every JSON-RPC call is served.'),
                        ('http_basic', 'Calls must carry HTTP Basic '
                                       'credentials found in '
                                       'http_basic_auth_user_file.'),
                        ('keystone', 'Calls must carry a Keystone token, '
                                     'validated by keystonemiddleware as '
                                     'configured in [keystone_authtoken], '
                                     'whose roles include "service", or '
                                     '"admin" in system scope: ferrum\'s '
                                     'own services, never a project\'s '
                                     'users.')],
               help='How a conductor authenticates JSON-RPC calls. Set the '
                    'same value on the API, which then sends '
                    'http_basic_username and http_basic_password, or '
                    '(keystone) a token it gets with this group\'s '
                    'auth_type and its options (auth_url, username, '
                    'password, project or system scope...), over '
                    'HTTPS verified against cafile.'),
    cfg.StrOpt('http_basic_auth_user_file',
               default='/etc/ferrum/htpasswd-json-rpc',
               help='On a conductor with auth_strategy http_basic: the '
                    'htpasswd file of the users allowed to call it, bcrypt '
                    'hashes only ("htpasswd -B"). The conductor refuses to '
                    'start when it is missing or malformed, and re-reads '
                    'it whenever it changes on disk.'),
    cfg.StrOpt('http_basic_username',
               help='On the API with auth_strategy http_basic: the user '
                    'name sent to conductors. Unset sends no credentials, '
                    'and conductors requiring them answer every call 401, '
                    'which the API reports as 503.'),
    cfg.StrOpt('http_basic_password', secret=True,
               help='On the API with auth_strategy http_basic: the password '
                    'sent with http_basic_username.'),
    cfg.BoolOpt('use_ssl', default=False,
                help='On a conductor: serve the JSON-RPC endpoint over HTTPS '
                     'only, with cert_file and key_file (by default [ssl] '
                     'cert_file and key_file), and register an https '
                     'address. On the API: call conductors over HTTPS only, '
                     'verifying their certificates against cafile; a '
                     'conductor registered with a plain http address is '
                     'then not called. Set it on the API and on every '
                     'conductor: HTTP Basic passwords and the BMC '
                     'credentials in driver_info otherwise cross the '
                     'network in clear text.'),
    cfg.StrOpt('cert_file',
               help='On a conductor with use_ssl: the PEM file of the '
                    'certificate its JSON-RPC endpoint serves, which must '
                    'name host_ip, the address the API connects to. Set it '
                    'together with key_file; with neither set, [ssl] '
                    'cert_file and key_file are used. The conductor refuses '
                    'to start when it is missing, unreadable or not a '
                    'certificate.'),
    cfg.StrOpt('key_file',
               help='On a conductor with use_ssl: the PEM file of the '
                    'unencrypted private key of cert_file. The conductor '
                    'refuses to start when it is missing, unreadable or '
                    'does not match the certificate.'),
    cfg.StrOpt('ca_file',
               help='On a conductor with use_ssl: the PEM file of the '
                    'certificate authorities that sign client '
                    'certificates; set, its JSON-RPC endpoint accepts only '
                    'callers presenting a certificate one of them signed '
                    '(the API\'s certfile and keyfile). Unset, [ssl] '
                    'ca_file is used; with neither set, no client '
                    'certificate is asked for. Set it here rather than in '
                    '[ssl] when the API shares this config file and its '
                    'clients present no certificates. Not to be confused '
                    'with cafile, which the API verifies conductors with.'),
    cfg.StrOpt('cafile',
               help='On the API: the PEM file of the certificate '
                    'authorities that sign the conductors\' certificates; '
                    'a conductor whose certificate none of them signed, or '
                    'which does not name the conductor\'s address, is not '
                    'called (the API answers 503 naming this option). '
                    'Unset, the system\'s trusted authorities are used. '
                    'The API refuses to start when it is missing or holds '
                    'no certificate.'),
    cfg.StrOpt('certfile',
               help='On the API: the PEM file of the client certificate it '
                    'presents to conductors, for conductors whose '
                    '[json_rpc] ca_file (or [ssl] ca_file) requires one. '
                    'Set it together with keyfile.'),
    cfg.StrOpt('keyfile',
               help='On the API: the PEM file of the unencrypted private '
                    'key of certfile.'),
]


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The transport in [DEFAULT], and the group's options for the sample
    file: ferrum's, then keystoneauth's auth options with the password
    plugin's (the API's credentials under auth_strategy keystone).
    keystoneauth's session options are left out: cafile, certfile, keyfile
    and timeout are ferrum's own here, and mean the same for Keystone and
    conductors."""
    seen: set[str] = set()
    result: list[cfg.Opt] = []
    for opt in (opts + ks_loading.get_auth_common_conf_options()
                + ks_loading.get_auth_plugin_conf_options('password')):
        if opt.dest not in seen:
            seen.add(opt.dest)
            result.append(opt)
    return {'DEFAULT': transport_opts, GROUP: result}


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(transport_opts)
    conf.register_opts(opts, group=GROUP)
    # auth_type and auth_section; the plugin registers its own options
    # when it is loaded (ferrum.rpc.service_auth).
    ks_loading.register_auth_conf_options(conf, GROUP)
