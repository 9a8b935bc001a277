# SPDX-License-Identifier: Apache-2.0
"""Options of the [ssl] group: the certificate the endpoints serve.

Ironic's names (oslo.service's ``[ssl]`` group): the API serves HTTPS with
them when ``[api] enable_ssl_api`` is set, and a conductor's JSON-RPC
endpoint when ``[json_rpc] use_ssl`` is set (unless ``[json_rpc]
cert_file`` and ``key_file`` name another certificate). See
:mod:`ferrum.common.tls`.
"""

from oslo_config import cfg

GROUP = 'ssl'

opts: list[cfg.Opt] = [
    cfg.StrOpt('cert_file',
               help='The PEM file of the certificate the API serves when '
                    '[api] enable_ssl_api is set, and a conductor\'s '
                    'JSON-RPC endpoint when [json_rpc] use_ssl is set and '
                    '[json_rpc] cert_file is not. Intermediate certificates '
                    'follow the server\'s own in the same file. It must '
                    'name the host clients use in their URLs (for the '
                    'JSON-RPC endpoint: [json_rpc] host_ip). The service '
                    'refuses to start when the file is missing, unreadable '
                    'or not a certificate.'),
    cfg.StrOpt('key_file',
               help='The PEM file of the private key of cert_file, '
                    'unencrypted. The service refuses to start when it is '
                    'missing, unreadable or does not match cert_file. Keep '
                    'it readable only by the user ferrum runs as.'),
    cfg.StrOpt('ca_file',
               help='The PEM file of the certificate authorities that sign '
                    'client certificates. Set, the endpoints serving HTTPS '
                    'accept only clients presenting a certificate signed '
                    'by one of them; unset, no client certificate is asked '
                    'for. A conductor\'s JSON-RPC endpoint uses [json_rpc] '
                    'ca_file instead when that is set.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {GROUP: opts}
