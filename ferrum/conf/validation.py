# SPDX-License-Identifier: Apache-2.0
"""Checks of the config files when a program starts.

oslo.config converts a value only when it is read, so a mistake in an
option read late (``[lease] busy_node_policy = substitue``, read by the
lease engine's periodic task) would let the service start and fail much
later. :func:`check_values` reads every option of ferrum's groups once,
at start, and names the first bad one.

oslo.config also ignores names it does not know. :func:`warn_unknown`
warns once about each name in ``[DEFAULT]`` or one of ferrum's groups that
no option has, with the nearest known name. A section that is not one of
ferrum's groups is named only when it resembles one (``[leases]``): other
sections may belong to a library that registers its options only when it
is loaded (``[keystone_authtoken]``, ``[oslo_policy]``) or to another
service sharing the file, and cannot be told from a mistake here.
"""

import difflib
import glob
import logging
import os
from collections.abc import Iterator, Mapping
from typing import Any

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from ferrum.common import exception
from ferrum.conf import json_rpc
from ferrum.conf import opts as opts_mod
from ferrum.conf import placement

LOG = logging.getLogger(__name__)

DEFAULT = 'DEFAULT'
#: difflib's similarity a name must reach to be suggested; its default,
#: 0.6, suggests "shell_completion" for "sql_connection".
_CUTOFF = 0.75
#: Where an installed host finds every option (the repository's sample
#: file is not installed with the package).
_EVERY_OPTION = ('"oslo-config-generator --namespace ferrum" prints every '
                 'option with its help (doc/deployment.md).')

#: ``{section: {option name: [values]}}`` of one file, as oslo.config
#: parses it.
Sections = dict[str, dict[str, list[str]]]


def config_files(conf: cfg.ConfigOpts) -> list[str]:
    """The files ``conf`` was read from, in oslo.config's order."""
    files = [os.path.abspath(path) for path in conf.config_file or []]
    for directory in conf.config_dir or []:
        files.extend(sorted(glob.glob(os.path.join(directory, '*.conf'))))
    return [path for path in files if os.path.isfile(path)]


def _parsed(conf: cfg.ConfigOpts) -> Iterator[tuple[str, Sections]]:
    for path in config_files(conf):
        sections: Sections = {}
        try:
            cfg.ConfigParser(path, sections).parse()
        except (OSError, cfg.ParseError):
            # oslo.config itself has parsed (or refused) the same file.
            continue
        yield path, sections


def _own_groups() -> list[str]:
    return [group for group, _opts in opts_mod.list_opts()]


def _group(conf: cfg.ConfigOpts, group: str) -> Mapping[str, Any]:
    """A group's options by name ([DEFAULT]'s also lists the groups)."""
    return conf if group == DEFAULT else conf[group]


def check_values(conf: cfg.ConfigOpts) -> None:
    """Read every option of ferrum's groups once.

    :raises ConfigInvalid: naming the first option whose value oslo.config
        refuses (a type, a bound or ``choices``), and the file setting it.
    """
    for group in _own_groups():
        attrs = _group(conf, group)
        for name in list(attrs):
            try:
                attrs[name]
            except cfg.ConfigSourceValueError as exc:
                # oslo.config says "Value for option X from <location> is
                # not valid: <why>"; the location is repeated by file.
                reason = str(exc).partition(' is not valid: ')[2] or str(exc)
                raise exception.ConfigInvalid(
                    group=group, option=name,
                    where=_where(conf, group, name),
                    reason=reason.rstrip('.')) from exc


def _where(conf: cfg.ConfigOpts, group: str, name: str) -> str:
    found = ''
    for path, sections in _parsed(conf):
        if name in sections.get(group, {}):
            found = path  # the last file wins, as in oslo.config
    return ' in %s' % found if found else ''


def _known(conf: cfg.ConfigOpts) -> dict[str, set[str]]:
    """Option names each group accepts, deprecated names included."""
    known: dict[str, set[str]] = {}
    groups = _own_groups()
    listed = [(group, list(group_opts))
              for group, group_opts in opts_mod.list_opts()]
    for auth_group in (placement.GROUP, json_rpc.GROUP):
        auth_type = conf[auth_group].auth_type
        if not auth_type:
            continue
        # The plugin registers its options only when the group's client
        # loads it; they are known by the plugin's name now.
        try:
            listed.append((auth_group,
                           ks_loading.get_auth_plugin_conf_options(
                               auth_type)))
        except ks_exc.NoMatchingPlugin:
            # The client names it when it loads the plugin.
            LOG.debug('No options for auth plugin %s', auth_type)
    for group, group_opts in listed:
        names = known.setdefault(group, set())
        for opt in group_opts:
            names.add(opt.dest)
            for old in opt.deprecated_opts:
                known.setdefault(old.group or group, set()).add(
                    (old.name or opt.name).replace('-', '_'))
    for group in groups:
        # Whatever else is registered (oslo.log in [DEFAULT]).
        known.setdefault(group, set()).update(_group(conf, group))
    return known


def warn_unknown(conf: cfg.ConfigOpts) -> list[str]:
    """Log one warning per unknown name; the warnings, for tests."""
    known = _known(conf)
    own = set(_own_groups())
    warnings: list[str] = []
    seen: set[tuple[str, str]] = set()
    for path, sections in _parsed(conf):
        for section, values in sections.items():
            if section not in known:
                nearest = difflib.get_close_matches(section, sorted(own), 1,
                                                      _CUTOFF)
                if nearest and (section, '') not in seen:
                    seen.add((section, ''))
                    warnings.append(
                        'Unknown section [%s] in %s is ignored; did you '
                        'mean [%s]?' % (section, path, nearest[0]))
                continue
            for name in values:
                key = name.replace('-', '_')
                if key in known[section] or (section, key) in seen:
                    continue
                seen.add((section, key))
                nearest = difflib.get_close_matches(
                    key, sorted(known[section]), 1, _CUTOFF)
                hint = ('did you mean %s?' % nearest[0] if nearest else
                        _EVERY_OPTION)
                warnings.append('Unknown option [%s] %s in %s is ignored; %s'
                                % (section, name, path, hint))
    for warning in warnings:
        LOG.warning('%s', warning)
    return warnings
