# SPDX-License-Identifier: Apache-2.0
"""Options of the [conductor] group: heartbeats, workers, timeouts,
periodics."""

from oslo_config import cfg

GROUP = 'conductor'

opts: list[cfg.Opt] = [
    cfg.IntOpt('heartbeat_interval', default=10, min=1,
               help='Seconds between two heartbeats this conductor writes to '
                    'the conductors table.'),
    cfg.IntOpt('heartbeat_timeout', default=60, min=2,
               help='Seconds after its last heartbeat when a conductor is '
                    'considered dead: its node locks are cleared and its work '
                    'is taken over. Keep it several times '
                    'heartbeat_interval so a busy conductor is not taken '
                    'over.'),
    cfg.IntOpt('workers_pool_size', default=100, min=3,
               help='Maximum number of threads running node operations '
                    '(deploy, clean, power) at once. When all are busy, new '
                    'operations are refused with a temporary failure (HTTP '
                    '503) and the node is left as it was.'),
    cfg.IntOpt('periodic_max_workers', default=8, min=1,
               help='Maximum number of threads the periodic tasks run on. '
                    'A periodic task that fans out over nodes never uses more '
                    'than this many threads.'),
    cfg.IntOpt('sync_power_state_interval', default=120, min=0,
               help='Seconds between two runs of the power-state sync, which '
                    'reads every managed node\'s power state from its BMC. '
                    '0 disables the sync.'),
    cfg.IntOpt('sync_power_state_workers', default=8, min=1, mutable=True,
               help='Threads used by one power-state sync run to query BMCs '
                    'in parallel; the effective number is also bounded by '
                    'periodic_max_workers.'),
    cfg.IntOpt('power_state_sync_max_retries', default=3, min=1,
               mutable=True,
               help='Consecutive failed power-state reads after which a node '
                    'is put in maintenance with the fault "power failure". '
                    'The fault is cleared when the BMC answers again.'),
    cfg.BoolOpt('force_power_state_during_sync', default=True, mutable=True,
                help='When the power-state sync finds a node in a different '
                     'power state than the database records, set the node '
                     'back to the recorded state (True) or record the state '
                     'the hardware reports (False).'),
    cfg.IntOpt('node_locked_retry_attempts', default=3, min=1, mutable=True,
               help='Attempts to take a node lock held by another task '
                    'before giving up with "node locked" (HTTP 409). Read '
                    'at each lock attempt.'),
    cfg.FloatOpt('node_locked_retry_interval', default=1.0, min=0,
                 mutable=True,
                 help='Seconds to wait between two attempts to take a node '
                      'lock. Read at each lock attempt.'),
    cfg.BoolOpt('automated_clean', default=True, mutable=True,
                help='Run automated cleaning (the clean steps with a '
                     'priority above 0) when a node is provided and when it '
                     'is torn down. When False, nodes pass straight through '
                     'cleaning.'),
    cfg.IntOpt('deploy_callback_timeout', default=1800, min=0, mutable=True,
               help='Seconds a node may stay in "wait call-back" before the '
                    'deploy is failed. 0 disables the timeout.'),
    cfg.IntOpt('clean_callback_timeout', default=1800, min=0, mutable=True,
               help='Seconds a node may stay in "clean wait" before cleaning '
                    'is failed. 0 disables the timeout.'),
    cfg.IntOpt('inspect_wait_timeout', default=1800, min=0, mutable=True,
               help='Seconds a node may stay in "inspect wait" before '
                    'inspection is failed (the node goes to "inspect '
                    'failed"). 0 disables the timeout.'),
    cfg.IntOpt('power_state_change_timeout', default=60, min=2, mutable=True,
               help='Seconds to wait for a node to reach the requested power '
                    'state after a power change before the change is '
                    'failed.'),
    cfg.IntOpt('soft_power_off_timeout', default=600, min=1, mutable=True,
               help='Seconds to wait for a node to reach the requested power '
                    'state after a soft power off or a soft reboot (the '
                    'operating system shuts down first, which takes longer '
                    'than a hard change) before the change is failed, when '
                    'the request gives no timeout. Always positive.'),
    cfg.IntOpt('check_provision_state_interval', default=60, min=0,
               help='Seconds between two runs of the periodic task that '
                    'fails nodes waiting in "wait call-back" or "clean wait" '
                    'for longer than their timeout, and clears the node '
                    'locks of conductors whose heartbeat is older than '
                    'heartbeat_timeout. 0 disables it.'),
    cfg.IntOpt('check_allocations_interval', default=60, min=0,
               help='Seconds between two runs of the periodic task that '
                    'takes over the allocations left "allocating" by '
                    'conductors whose heartbeat is older than '
                    'heartbeat_timeout, and finishes them. 0 disables it; '
                    'such allocations then wait until their conductor '
                    'comes back.'),
    cfg.IntOpt('sync_local_state_interval', default=60, min=0,
               help='Seconds between two runs of the periodic task that '
                    'takes over the active nodes the hash ring now gives '
                    'to this conductor (because a conductor died, stopped '
                    'or joined): the node\'s deploy interface prepares and '
                    'takes the node over, and the node records this '
                    'conductor as the one that handles it. A take-over that '
                    'fails leaves the node active with last_error set and is '
                    'retried at the next run. 0 disables it; nodes then '
                    'keep whatever per-conductor state their previous '
                    'conductor set up.'),
    cfg.FloatOpt('allocation_wait_timeout', default=1.0, min=0,
                 mutable=True,
                 help='Seconds a create-allocation request waits for the '
                      'allocation to finish before answering with state '
                      '"allocating" (clients then poll). The first few '
                      'candidates are tried before the answer, in the '
                      'transaction that creates the allocation, and most '
                      'allocations finish there, so the answer is usually '
                      'already "active" or "error". 0 gives Ironic\'s '
                      'answer: the allocation is committed "allocating", '
                      'the answer says so at once and every candidate is '
                      'tried on a worker afterwards (clients that expect '
                      '"allocating" then work; each allocation costs one '
                      'more transaction and at least one poll).'),
    cfg.FloatOpt('action_wait_timeout', default=0.2, min=0, mutable=True,
                 help='Seconds a power or provisioning request (an API '
                      '202) waits for the work it started to finish before '
                      'answering. Work that takes milliseconds, such as a '
                      'fake-hardware power change or a verification, is '
                      'then already done when the client first polls, which '
                      'saves it several polls. Slower work goes on after the '
                      'answer, as always. 0 answers as soon as the work is '
                      'handed to a worker, as Ironic does.'),
    cfg.BoolOpt('allow_deleting_available_nodes', default=True,
                mutable=True,
                help='Allow deleting nodes in "available", beside the '
                     'states where deletion is always allowed (enroll, '
                     'manageable, adopt failed) and any node in maintenance. '
                     'False keeps an available node until it is moved to '
                     'manageable, so that a script cannot delete capacity '
                     'that is ready for use by mistake. As Ironic\'s option '
                     'of the same name.'),
    cfg.StrOpt('conductor_group', default='',
               regex=r'^[a-zA-Z0-9_.-]*$', max_length=255,
               help='The group of nodes this conductor manages: only nodes '
                    'whose conductor_group equals it (case-insensitively). '
                    'The empty default manages nodes without a group. '
                    'Letters, digits, "_", "." and "-" only.'),
    cfg.IntOpt('graceful_shutdown_timeout', default=60, min=0,
               help='Seconds a stopping conductor waits for in-flight node '
                    'operations to finish. Nodes still in a transient state '
                    'after that are failed cleanly and unlocked. 0 fails '
                    'them at once.'),
    cfg.BoolOpt('node_history', default=True,
                help='Record node history (GET /v1/nodes/{node}/history, '
                     'API 1.78) and the allocation and lease events of GET '
                     '/v1/events, each in the transaction of the change it '
                     'records. False records nothing new; what was recorded '
                     'stays readable until it is pruned.'),
    cfg.IntOpt('node_history_max_entries', default=300, min=1,
               help='Maximum number of history entries kept per node; the '
                    'periodic cleanup deletes the oldest beyond it (only '
                    'those older than node_history_minimum_days).'),
    cfg.IntOpt('node_history_cleanup_interval', default=86400, min=0,
               help='Seconds between two runs of the history cleanup on '
                    'each conductor. 0 disables the cleanup: history then '
                    'grows without bound.'),
    cfg.IntOpt('node_history_cleanup_batch_count', default=1000, min=1,
               help='Maximum number of history entries one cleanup run '
                    'deletes, so that a run never holds the database '
                    'long; the next run goes on.'),
    cfg.IntOpt('node_history_minimum_days', default=0, min=0,
               help='Days an entry is kept whatever '
                    'node_history_max_entries says. 0 lets the cleanup '
                    'delete any entry beyond the maximum.'),
    cfg.IntOpt('event_retention_days', default=7, min=1,
               help='Days the events that belong to no node (those of '
                    'allocations and leases, and those of nodes since '
                    'deleted) are kept in GET /v1/events before the '
                    'history cleanup deletes them.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {GROUP: opts}
