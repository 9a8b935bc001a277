# SPDX-License-Identifier: Apache-2.0
"""Options of the [placement] group: where Placement is, how ferrum logs in
to it, and how often the inventory is reconciled.

Connection options are keystoneauth1's own (auth, session and adapter
options), registered with its loading helpers as nova and Ironic register
theirs, so an operator configures ferrum's Placement client exactly like
theirs. Sync is off while ``auth_type`` is unset.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'placement'

opts: list[cfg.Opt] = [
    cfg.IntOpt('sync_interval', default=60, min=0,
               help='Seconds between two reconciles, which compare every '
                    'node with its resource provider in Placement and queue '
                    'the ones that drifted (a node whose provider did not '
                    'change costs no write). Changes made through ferrum '
                    'are pushed at once, not at this interval. 0 disables '
                    'the reconcile.'),
    cfg.IntOpt('max_conflict_retries', default=4, min=0,
               help='Times one push re-reads the provider, or one write '
                    'of consumers re-reads them, and tries again when '
                    'Placement answers 409 placement.concurrent_update '
                    '(someone else changed them meanwhile). Each retry of '
                    'a push waits a random time of up to 0.1 s times the '
                    'attempt number. 0 means no retry: the change stays '
                    'queued for the next round, and a claim is refused '
                    '(a write of a consumer presumed new still reads it '
                    'once when Placement says it exists).'),
    cfg.IntOpt('outage_retry_interval', default=5, min=1,
               help='Seconds between two attempts to reach Placement while '
                    'it is down or refusing ferrum\'s credentials. Changes '
                    'queue up meanwhile and are pushed once it answers.'),
    cfg.IntOpt('push_workers', default=4, min=1,
               help='Threads one conductor pushes queued node changes to '
                    'Placement with. Each push is a few short HTTP '
                    'requests; more threads drain a large backlog faster '
                    'when Placement has workers to match.'),
    cfg.FloatOpt('poll_interval', default=0.2, min=0.01,
                 help='Seconds between two looks at the change queue while '
                      'it is empty. A node change reaches Placement about '
                      'this long after it was made, plus the push itself.'),
    cfg.IntOpt('push_batch_size', default=20, min=1,
               help='Most nodes one conductor claims from the change queue '
                    'at a time; the next claim waits until the whole batch '
                    'is pushed. The inventory-only changes of a batch '
                    '(reserved going 0 or 1) are written in one POST '
                    '/reshaper when Placement serves microversion 1.30 and '
                    'its policy lets ferrum call it. Smaller batches spread '
                    'a backlog more evenly over several conductors and '
                    'keep a new change from waiting behind a long batch; '
                    'larger ones cost fewer requests and database round '
                    'trips.'),
]

#: What keystoneauth's adapter options default to for Placement: the
#: service type and interfaces nova and Ironic use.
ADAPTER_DEFAULTS = {'service_type': 'placement',
                    'valid_interfaces': ['internal', 'public']}


def _adapter_opts() -> list[cfg.Opt]:
    adapter = ks_loading.get_adapter_conf_options(include_deprecated=False)
    cfg.set_defaults(adapter, **ADAPTER_DEFAULTS)
    return adapter


def _session_opts() -> list[cfg.Opt]:
    session = ks_loading.get_session_conf_options()
    # keystoneauth waits forever by default; a hung Placement must fail the
    # push (and keep the change queued), not hold a worker thread.
    cfg.set_defaults(session, timeout=30)
    return session


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)
    conf.register_opts(_session_opts(), group=GROUP)
    ks_loading.register_auth_conf_options(conf, GROUP)
    conf.register_opts(_adapter_opts(), group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """Every option of the group, for the sample file: ferrum's, then
    keystoneauth's session, auth and adapter options, with the options of
    the two auth plugins most sites use (admin_token for a Placement
    running noauth2, password for Keystone)."""
    seen: set[str] = set()
    result: list[cfg.Opt] = []
    for opt in (opts + _session_opts()
                + ks_loading.get_auth_common_conf_options()
                + ks_loading.get_auth_plugin_conf_options('admin_token')
                + ks_loading.get_auth_plugin_conf_options('password')
                + _adapter_opts()):
        if opt.dest not in seen:
            seen.add(opt.dest)
            result.append(opt)
    return {GROUP: result}


def enabled(conf: cfg.ConfigOpts) -> bool:
    """Whether Placement sync is configured (``auth_type`` is set)."""
    return bool(conf.placement.auth_type)
