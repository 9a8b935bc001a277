# SPDX-License-Identifier: Apache-2.0
"""Options of the [lease] group: lease windows, the engine and its policies."""

from oslo_config import cfg

GROUP = 'lease'

opts: list[cfg.Opt] = [
    cfg.IntOpt('max_duration', default=30 * 24 * 3600, min=0,
               mutable=True,
               help='Longest lease, in seconds, from its start to its end. '
                    'A longer lease, or an extension past it, is refused '
                    'with HTTP 400. 0 means no limit.'),
    cfg.IntOpt('cleaning_margin', default=300, min=0, max=7 * 24 * 3600,
               mutable=True,
               help='Seconds after a lease ends during which its nodes '
                    'cannot start another lease: the time their undeploy '
                    'and cleaning take. It is part of the window the '
                    'database guards against overlap, fixed when the lease '
                    'is created. 0 allows back-to-back leases.'),
    cfg.IntOpt('guard_time', default=600, min=0, max=7 * 24 * 3600,
               mutable=True,
               help='Seconds before a lease starts during which its nodes '
                    'are no longer offered to allocations of other projects, '
                    'so that they are free when the lease starts. 0 hides '
                    'them only from the start.'),
    cfg.IntOpt('start_grace', default=60, min=0, mutable=True,
               help='Seconds a requested lease start may lie in the past '
                    '(clock skew, a slow client); an earlier start is '
                    'refused with HTTP 400. 0 refuses any start in the '
                    'past.'),
    cfg.IntOpt('before_end', default=3600, min=0, max=365 * 24 * 3600,
               mutable=True,
               help='Seconds before a lease ends when its "before_end" '
                    'event fires (logged and shown on the lease as '
                    'before_end_fired_at), unless the lease gives its own '
                    'before_end time. 0 disables the default event.'),
    cfg.StrOpt('busy_node_policy', default='substitute', mutable=True,
               choices=[('substitute', 'Replace the node by a free node '
                                       'that matches the lease and is not '
                                       'booked for the rest of its window; '
                                       'the lease fails only when there is '
                                       'none.'),
                        ('fail', 'Fail the start: the lease goes to '
                                 '"error" with a last_error naming the '
                                 'busy nodes, and keeps its window until '
                                 'it is deleted or ends.')],
               help='What a lease start does with a node it cannot hand '
                    'over: one still held by someone else (deployed, '
                    'allocated, locked or not available), or one that no '
                    'longer matches the lease (in maintenance, retired, '
                    'given another resource class, owner or traits) or '
                    'was deleted. A lease never goes active with fewer '
                    'nodes than it booked.'),
    cfg.IntOpt('check_interval', default=2, min=0,
               help='Seconds between two runs of the lease engine on each '
                    'conductor; it starts due leases, fires before_end '
                    'events, ends leases, gives back the nodes whose '
                    'cleaning finished and finishes the transitions of '
                    'dead conductors. A lease starts, and a cleaned node '
                    'comes back, up to this long late; a run with nothing '
                    'to do costs six small queries. 0 disables the engine '
                    'on this conductor.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {GROUP: opts}
