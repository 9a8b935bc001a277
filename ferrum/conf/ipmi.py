# SPDX-License-Identifier: Apache-2.0
"""Options of the [ipmi] group: how the ``ipmi`` hardware type runs ipmitool.

Every option is read when a command runs, so a reload (or a test's
override) takes effect at the next command.
"""

from oslo_config import cfg

GROUP = 'ipmi'

opts: list[cfg.Opt] = [
    cfg.FloatOpt('command_retry_timeout', default=60.0, min=0.0,
                 help='Seconds during which a command that failed because '
                      'the BMC was busy or did not answer is retried. Other '
                      'errors (wrong credentials, cipher suite, an '
                      'unsupported command) are never retried.'),
    cfg.FloatOpt('min_command_interval', default=1.0, min=0.0,
                 help='Minimum seconds between two commands to one BMC '
                      '(address and port). Commands to one BMC are also '
                      'never run at the same time. Raise it for BMCs that '
                      'drop sessions when addressed too quickly.'),
    cfg.IntOpt('session_timeout', default=1, min=1,
               help='Seconds ipmitool waits for each answer before it resends '
                    '(its -N option). With session_retries, this bounds how '
                    'long one attempt against a silent BMC takes: 2 s for '
                    '1 and 1.'),
    cfg.IntOpt('session_retries', default=1, min=1,
               help='Times ipmitool resends a request before giving up on one '
                    'attempt (its -R option). ferrum itself retries busy or '
                    'silent BMCs until command_retry_timeout.'),
    cfg.FloatOpt('power_poll_interval', default=1.0, min=0.01,
                 help='Seconds between two power-state reads while waiting '
                      'for a power change to take effect.'),
    cfg.BoolOpt('disable_boot_timeout', default=True,
                help='Before setting a boot device, tell the BMC not to '
                     'forget it after 60 seconds (IPMI boot option '
                     'parameter 3). A node can override this with '
                     'driver_info ipmi_disable_boot_timeout, e.g. for BMCs '
                     'that reject the parameter.'),
    cfg.ListOpt('additional_retryable_errors', default=[],
                help='Extra substrings of ipmitool error output that mean '
                     '"busy, retry later", for BMCs with their own wording.'),
    cfg.StrOpt('password_file_dir',
               help='Directory for the short-lived 0600 files that hand BMC '
                    'passwords to ipmitool. Default: the system temporary '
                    'directory.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {GROUP: opts}
