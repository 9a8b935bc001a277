# SPDX-License-Identifier: Apache-2.0
"""``python -m ipa_loopdisk``: print what the agent would see, as JSON, or
exit 1 naming the reason the agent must not start."""

import json
import sys

from ipa_loopdisk import manager


def main() -> int:
    """Run :func:`manager.self_check`; 0 and its JSON when safe."""
    try:
        report = manager.self_check()
    except manager.UnsafeDisk as exc:
        print('ipa_loopdisk: %s' % exc, file=sys.stderr)
        return 1
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main())
