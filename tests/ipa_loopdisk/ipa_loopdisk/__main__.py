# SPDX-License-Identifier: Apache-2.0
"""``python -m ipa_loopdisk``: print what the agent would see, as JSON, or
exit 1 naming the reason the agent must not start.

``python -m ipa_loopdisk --report FILE -- ARGS...`` runs the same check
and writes its JSON to ``FILE`` (complete or not at all; ``{"refused":
REASON}`` and exit 1 when the agent must not start). Only then does it
run ironic-python-agent in this same process, with ``ARGS`` as its
command line: the check sees exactly the environment the agent runs in, and a
boot pays for one interpreter and one import of the agent, not two (about
1.5 s of each agent start on these machines).
"""

import json
import os
import sys

from ipa_loopdisk import manager


def check() -> dict[str, object]:
    """:func:`manager.self_check`, or ``{"refused": REASON}`` (printed)."""
    try:
        return manager.self_check()
    except manager.UnsafeDisk as exc:
        print('ipa_loopdisk: %s' % exc, file=sys.stderr, flush=True)
        return {'refused': str(exc)}


def run_agent(report_path: str, agent_args: list[str]) -> int:
    """Check, write the report, then be the agent; its exit status."""
    report = check()
    partial = report_path + '.partial'
    with open(partial, 'w') as out:
        json.dump(report, out, sort_keys=True)
    os.replace(partial, report_path)
    if 'refused' in report:
        return 1
    from ironic_python_agent.cmd import agent

    sys.argv = ['ironic-python-agent'] + agent_args
    agent.run()
    return 0


def main(argv: list[str]) -> int:
    """The report alone, or ``--report FILE -- ARGS...`` (see above)."""
    if argv[:1] == ['--report']:
        if len(argv) < 3 or argv[2] != '--':
            print('usage: python -m ipa_loopdisk [--report FILE -- ARGS...]',
                  file=sys.stderr)
            return 2
        return run_agent(argv[1], argv[3:])
    report = check()
    if 'refused' in report:
        return 1
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
