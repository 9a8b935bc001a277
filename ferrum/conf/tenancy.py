# SPDX-License-Identifier: Apache-2.0
"""Options of ``auth_strategy = keystone``: [keystone_authtoken] and
[oslo_policy], registered as their libraries define them.

[keystone_authtoken] is keystonemiddleware's own group (plus the
keystoneauth plugin that validates tokens, e.g. ``auth_type = password``);
oslo-config-generator lists it under the ``keystonemiddleware.auth_token``
namespace, and [oslo_policy] under ``oslo.policy``.
"""

from keystoneauth1 import loading as ks_loading
from keystonemiddleware import auth_token
from oslo_config import cfg
from oslo_policy import opts as policy_opts

from ferrum.common import keystone_auth

KEYSTONE_GROUP = keystone_auth.GROUP
#: Looked for in the configuration directories, as Ironic's policy.yaml.
POLICY_FILE = 'policy.yaml'


def register_opts(conf: cfg.ConfigOpts) -> None:
    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)
    ks_loading.register_auth_conf_options(conf, KEYSTONE_GROUP)
    # Ironic's defaults: policy.yaml, and only the secure-RBAC rules.
    policy_opts.set_defaults(conf, POLICY_FILE, enforce_new_defaults=True)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """None: the sample file lists these groups under their libraries'
    namespaces (``keystonemiddleware.auth_token``, ``oslo.policy``)."""
    return {}
