# SPDX-License-Identifier: Apache-2.0
"""``ferrum-oneview-migrate``: move oneview nodes to dynamic allocation.

Under pre-allocation every enrolled node's hardware carried a profile. The
spec's upgrade steps, done here:

* ``active`` nodes: record the profile on their hardware in ``driver_info
  applied_server_profile_uri``, so the driver knows it is ferrum's;
* ``available`` nodes: remove the profile from their hardware (powering it
  off first), so OneView users can take the idle hardware.

Other nodes, and nodes in maintenance, are reported and left alone (the
procedure for them is in doc/oneview.md). The default is a dry run that
prints what would change; ``--apply`` changes it. Each node is changed
under its lock, as a conductor would, so the tool can run next to live
conductors; a locked node is skipped (run the tool again). The server
hardware is listed once, ``[oneview] page_size`` per request.

The tool refuses to run while its configuration (the conductors' file)
has the OneView periodic tasks on: to them an ``available`` node whose
profile is not recorded yet looks exactly like one whose hardware a
OneView user took, and within one interval they would move it to
maintenance, out of this tool's reach.
"""

import dataclasses
import logging
import socket
import sys
from typing import Any, TextIO

from oslo_config import cfg
from oslo_log import log

from ferrum import conf as ferrum_conf
from ferrum.cmd import startup
from ferrum.common import exception
from ferrum.common import plural
from ferrum.common import states
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.drivers.oneview import allocation
from ferrum.drivers.oneview import client as client_mod
from ferrum.drivers.oneview import driver_info
from ferrum.drivers.oneview import errors
from ferrum.objects import node as node_obj

_CLI_OPTS = [
    cfg.BoolOpt('apply', default=False,
                help='Change the nodes and profiles. Without it the tool '
                     'only prints what it would do.'),
    cfg.IntOpt('progress-every', default=100, min=1,
               help='Print a progress line on stderr after this many '
                    'nodes.'),
    cfg.BoolOpt('verbose', default=False,
                help='Also log what ferrum and hpOneView do (INFO and '
                     'above) on stderr, or where --log-file says. Without '
                     'it, or --debug or --log-file, only the report and '
                     'one line per error are printed.'),
]

#: Exit status when the periodic tasks are on (see the module docstring).
PERIODICS_ON = 3

RECORD, REMOVE, FORGET, KEEP = 'record', 'remove', 'forget', 'keep'


@dataclasses.dataclass
class Plan:
    """What to do with one node, and why (one report line)."""

    action: str
    detail: str
    profile: str | None = None


def plan_for(node: node_obj.Node,
             hardware: dict[str, dict[str, Any]]) -> Plan:
    """Decide, without changing anything, what migrating ``node`` means."""
    uri = node.driver_info.get(driver_info.HARDWARE_URI)
    applied = node.driver_info.get(driver_info.APPLIED_PROFILE_URI)
    found = hardware.get(str(uri))
    if found is None:
        return Plan(KEEP, 'server hardware %s is not in OneView' % uri)
    profile = found.get('serverProfileUri') or None
    if node.maintenance:
        if node.maintenance_reason == allocation.MAINTENANCE_REASON:
            return Plan(KEEP, 'moved to maintenance by the periodic tasks '
                        'as in use by OneView; if profile %s on %s is a '
                        'pre-allocation one, remove it in OneView (see '
                        'doc/oneview.md, Migrating)' % (profile, uri))
        return Plan(KEEP, 'in maintenance; migrate it by hand (see '
                    'doc/oneview.md, Migrating)')
    if node.provision_state == states.ACTIVE:
        if not profile:
            return Plan(KEEP, 'active but %s has no profile' % uri)
        if applied == profile:
            return Plan(KEEP, 'already records profile %s' % profile)
        if applied:
            return Plan(KEEP, 'records profile %s but %s has %s; check it '
                        'by hand' % (applied, uri, profile))
        return Plan(RECORD, 'record profile %s' % profile, profile)
    if node.provision_state == states.AVAILABLE:
        if profile:
            return Plan(REMOVE, 'remove profile %s from %s' % (profile, uri),
                        profile)
        if applied:
            return Plan(FORGET, 'forget stale profile record %s' % applied)
        return Plan(KEEP, 'already free')
    return Plan(KEEP, 'in state %s; nothing to migrate'
                % node.provision_state)


def _apply(db: db_api.Database, ov: client_mod.Client, host: str,
           node: node_obj.Node, plan: Plan) -> None:
    locked = node_obj.Node.reserve(db, host, node.id)
    try:
        if (locked.provision_state != node.provision_state
                or locked.driver_info != node.driver_info):
            raise exception.InvalidState(
                reason='changed while the tool ran; run it again')
        info = dict(locked.driver_info)
        if plan.action == RECORD:
            info[driver_info.APPLIED_PROFILE_URI] = plan.profile
        else:
            if plan.action == REMOVE:
                assert plan.profile is not None
                uri = str(info[driver_info.HARDWARE_URI])
                if ov.get_server_hardware(uri).get('powerState') != 'Off':
                    ov.set_power_state(uri, allocation.POWER_OFF)
                    locked.power_state = states.POWER_OFF
                ov.delete_profile(plan.profile)
            info.pop(driver_info.APPLIED_PROFILE_URI, None)
        locked.driver_info = info
    except BaseException:
        node_obj.Node.release(db, host, node.id, {})
        raise
    node_obj.Node.release(db, host, node.id, locked.changes())


def migrate(conf: cfg.ConfigOpts, db: db_api.Database,
            ov: client_mod.Client, out: TextIO, err: TextIO) -> int:
    """Report (and with ``--apply`` do) the migration; the exit status."""
    apply = conf.apply
    host = 'ferrum-oneview-migrate@%s' % socket.gethostname()
    nodes = node_obj.Node.list(db, {'driver': 'oneview'})
    hardware = {str(item.get('uri')): item
                for item in ov.list_server_hardware(conf.oneview.page_size)}
    counts = dict.fromkeys((RECORD, REMOVE, FORGET, KEEP, 'failed'), 0)
    for index, node in enumerate(nodes, 1):
        plan = plan_for(node, hardware)
        outcome = plan.action
        note = ''
        if apply and plan.action != KEEP:
            try:
                _apply(db, ov, host, node, plan)
            except (exception.FerrumException, errors.OneViewError) as exc:
                outcome, note = 'failed', ': FAILED: %s' % exc
        counts[outcome] += 1
        verb = ('leave' if plan.action == KEEP else 'would' if not apply
                else 'failed' if note else 'done')
        print('%s %s (%s): %s%s' % (verb, node.uuid, node.provision_state,
                                    plan.detail, note), file=out)
        if index % conf.progress_every == 0:
            print('... %d of %s' % (index, plural.count(len(nodes), 'node')),
                  file=err)
    print('%s: %d to record, %d to remove, %s, %d left alone, %d failed.%s'
          % (plural.count(len(nodes), 'oneview node'), counts[RECORD],
             counts[REMOVE], plural.count(counts[FORGET], 'stale record'),
             counts[KEEP], counts['failed'],
              '' if apply else ' Dry run: nothing was changed; run again '
              'with --apply to migrate.'), file=out)
    return 1 if counts['failed'] else 0


def periodics_on(conf: cfg.ConfigOpts) -> str | None:
    """Why the tool must not run now, or None."""
    if not (conf.oneview.enable_periodic_tasks
            and conf.oneview.periodic_check_interval):
        return None
    return ('[oneview] enable_periodic_tasks is true in this configuration. '
            'The conductors\' OneView periodic tasks take an available node '
            'whose profile is not recorded yet for one whose hardware a '
            'OneView user took, and move it to maintenance before this '
            'tool can record or remove that profile. Set [oneview] '
            'enable_periodic_tasks = false in every conductor\'s '
            'configuration, restart them, run this tool with that '
            'configuration, then turn the tasks back on (doc/oneview.md, '
            'Migrating).')


def main(argv: list[str] | None = None) -> int:
    return startup.main('ferrum-oneview-migrate', lambda: _main(argv),
                        failure=2)


def _main(argv: list[str] | None) -> int:
    conf = ferrum_conf.load_for_program(
        argv if argv is not None else sys.argv[1:],
        cfg.find_config_files('ferrum', 'ferrum'), cli_opts=_CLI_OPTS,
        setup_logging=False)
    if conf.verbose or conf.debug or conf.log_file or conf.use_journal:
        log.setup(conf, 'ferrum')
    else:
        # The report says what failed, once: log lines (hpOneView's own
        # about a failed login among them) would repeat it on stderr
        # through the handler oslo.log puts on the root logger until setup.
        root = logging.getLogger()
        for handler in list(root.handlers):
            root.removeHandler(handler)
        root.addHandler(logging.NullHandler())
    refusal = periodics_on(conf)
    if refusal is not None:
        print('ferrum-oneview-migrate: refusing to run: %s' % refusal,
              file=sys.stderr)
        return PERIODICS_ON
    db = db_api.Database(conf, create=False)
    try:
        current = migration.version(db.engine)
        if current != migration.head():
            print('ferrum-oneview-migrate: the database is at schema '
                  'revision %s but this ferrum needs %s; run "ferrum-dbsync '
                  'upgrade" (with the conductors\' configuration) first.'
                  % (current, migration.head()), file=sys.stderr)
            return 2
        ov = client_mod.get_client(conf)
        return migrate(conf, db, ov, sys.stdout, sys.stderr)
    except errors.OneViewError as exc:
        print('ferrum-oneview-migrate: %s' % exc, file=sys.stderr)
        return 2
    finally:
        db.dispose()


if __name__ == '__main__':
    sys.exit(main())
