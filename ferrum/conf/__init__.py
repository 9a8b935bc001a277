# SPDX-License-Identifier: Apache-2.0
"""ferrum's configuration: one module per option group, registered on demand.

Nothing here creates a global ``CONF``. Services receive the ``ConfigOpts``
they run with, so each test builds a fresh one with :func:`new_conf`.
"""

from collections.abc import Callable, Sequence
from typing import Any

from oslo_config import cfg
from oslo_log import log

from ferrum.common import memory
from ferrum.conf import opts
from ferrum.conf import validation


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register every ferrum option group (and oslo.log's) on ``conf``."""
    for module in opts.group_modules():
        module.register_opts(conf)
    log.register_options(conf)


def new_conf(args: list[str] | None = None,
             default_config_files: list[str] | None = None,
             cli_opts: Sequence[cfg.Opt] = ()) -> cfg.ConfigOpts:
    """Build and parse a fresh ``ConfigOpts`` with every ferrum option.

    :param cli_opts: a program's own command-line options (subcommands).
    """
    conf = cfg.ConfigOpts()
    register_opts(conf)
    for opt in cli_opts:
        conf.register_cli_opt(opt)
    conf(args or [], project='ferrum',
         default_config_files=default_config_files or [])
    return conf


def load_for_program(args: list[str] | None,
                     default_config_files: list[str] | None = None,
                     cli_opts: Sequence[cfg.Opt] = (),
                     setup_logging: bool = True) -> cfg.ConfigOpts:
    """Set up a ferrum program: memory policy, configuration, logging.

    For the console scripts and the WSGI entry point; tests use
    :func:`new_conf`, which leaves logging alone. Every option of ferrum's
    groups is read here, so a bad value stops the program at start (see
    :mod:`ferrum.conf.validation`), and unknown names are warned about.

    :param cli_opts: the program's own command-line options (subcommands).
    :param setup_logging: False for command-line tools whose standard
        output is their result: Python's last-resort handler then writes
        warnings to standard error.
    :raises oslo_config.cfg.Error: a config file is missing or unparseable.
    :raises ConfigInvalid: an option has a value oslo.config refuses.
    """
    memory.return_large_buffers()
    conf = new_conf(args, default_config_files, cli_opts)
    # Before logging is set up: oslo.log reads its options unchecked.
    validation.check_values(conf)
    if setup_logging:
        log.setup(conf, 'ferrum')
    validation.warn_unknown(conf)
    return conf


def load_for_tool(argv: list[str], add_commands: Callable[[Any], None]
                  ) -> cfg.ConfigOpts:
    """:func:`load_for_program` for a command-line tool with subcommands
    (``ferrum-dbsync``, ``ferrum-placement``).

    Without ``--config-file`` it reads ferrum.conf from oslo.config's usual
    places (~/.ferrum, ~, /etc/ferrum, /etc), as a packaged service has
    it; its standard output is its result, so logging is left alone.

    :param add_commands: oslo.config's subcommand handler, given the
        argparse subparsers.
    """
    return load_for_program(
        argv, cfg.find_config_files('ferrum', 'ferrum'),
        cli_opts=[cfg.SubCommandOpt('command', title='Commands',
                                    handler=add_commands)],
        setup_logging=False)
