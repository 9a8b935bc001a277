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

``--report FILE --standby BUTTON -- ARGS...`` is a machine plugged in but
off: after the check it imports the agent, creates ``BUTTON.waiting`` and
blocks on the FIFO ``BUTTON`` until the host writes to it (the power
button); only then does the agent run. Its boot after the button is the
agent's own start, not the interpreter's nor the imports'.
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


def stand_by(button: str) -> None:
    """Wait for the power button: a write to the FIFO ``button``.

    ``button.waiting`` tells the host this process holds the FIFO open
    (its open blocks until the host opens it to write).
    """
    open(button + '.waiting', 'w').close()
    with open(button, 'rb') as fifo:
        fifo.read(1)


def run_agent(report_path: str, agent_args: list[str],
              button: str | None = None) -> int:
    """Check, write the report, then be the agent (once ``button`` is
    pressed, with one); its exit status."""
    report = check()
    partial = report_path + '.partial'
    with open(partial, 'w') as out:
        json.dump(report, out, sort_keys=True)
    os.replace(partial, report_path)
    if 'refused' in report:
        return 1
    from ironic_python_agent.cmd import agent

    if button is not None:
        stand_by(button)
    sys.argv = ['ironic-python-agent'] + agent_args
    agent.run()
    return 0


def main(argv: list[str]) -> int:
    """The report alone, or ``--report FILE [--standby BUTTON] --
    ARGS...`` (see above)."""
    if argv[:1] == ['--report']:
        button = None
        rest = argv[2:]
        if rest[:1] == ['--standby'] and len(rest) >= 2:
            button, rest = rest[1], rest[2:]
        if len(argv) < 3 or rest[:1] != ['--']:
            print('usage: python -m ipa_loopdisk [--report FILE '
                  '[--standby BUTTON] -- ARGS...]', file=sys.stderr)
            return 2
        return run_agent(argv[1], rest[1:], button)
    report = check()
    if 'refused' in report:
        return 1
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
