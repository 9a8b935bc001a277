#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: the request scanner's worst cases, at 1 MiB each.

``ferrum.common.json_depth.within`` scans every request body (REST API and
JSON-RPC) before authentication, so an attacker chooses its input. This
script times each of the worst cases below (:func:`worst_cases`, also used
by tests/unit/common/test_json_depth.py and tools/bench/hostile_input.py)
and prints one JSON line: the best of ``--repeat`` runs per case, in
seconds elapsed and of CPU, the slowest case, whether every case stayed
within the target, and the machine's load (a busy machine delays the
scans).

Target (issue 27): each worst case at 1 MiB in at most 0.2 s.
"""

import argparse
import json
import os
import sys
import time
from typing import Any

# ferrum from the checkout this script is in, installed or not.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
from ferrum.common import json_depth  # noqa: E402

TARGET_SECONDS = 0.2
_MIB = 1024 * 1024


def _repeat(unit: bytes, size: int, prefix: bytes = b'',
            suffix: bytes = b'') -> bytes:
    count = max(1, (size - len(prefix) - len(suffix)) // len(unit))
    return prefix + unit * count + suffix


def worst_cases(size: int) -> dict[str, bytes]:
    """Bodies of about ``size`` bytes that a scanner could choke on.

    Unterminated strings and escape runs backtrack in a careless regular
    expression; quotes and brackets alternating in every mix make many
    tiny tokens; deep brackets test the depth count itself.
    """
    string = b'{"driver": "'
    return {
        'unterminated_string': _repeat(b'x', size, string),
        'unterminated_utf8': _repeat('\u00e9'.encode(), size, string),
        'backslash_run': _repeat(b'\\', size, string, b'\\'),
        'escaped_quotes': _repeat(b'\\"', size, b'"', b'\\'),
        'escaped_backslash_quote': _repeat(b'\\\\"', size, b'"'),
        'unicode_escapes': _repeat(b'\\u00e9', size, string),
        'letters_and_escapes': _repeat(b'x\\', size, string),
        'quotes': _repeat(b'"', size),
        'quote_bracket': _repeat(b'["', size),
        'bracket_quote_escape': _repeat(b'["\\', size),
        'brackets_in_strings': _repeat(b'["[", "]"], ', size, b'['),
        'open_brackets': _repeat(b'[', size),
        'brackets_mixed': _repeat(b'[]][', size),
        'brackets_and_braces': _repeat(b'{[}]', size),
        'short_strings': _repeat(b'"a",', size, b'['),
        'empty_strings': _repeat(b'"",', size, b'['),
        'shallow_documents': _repeat(b'{"a": [1, {"b": "c"}]},', size, b'['),
    }


#: Cases valid JSON up to their last byte, from which the parser builds
#: some 100,000 values before it fails: a cost of the parser's, not the
#: scanner's (doc/performance.md, "Issue 27: request scanner", measures
#: what they add to hostile_input.py's memory growth; that leaves them out).
PARSED_TO_THE_END = frozenset([
    'short_strings', 'empty_strings', 'brackets_in_strings',
    'shallow_documents'])


def _best(raw: bytes, repeat: int) -> tuple[float, float]:
    """The best (elapsed, CPU) seconds of ``repeat`` scans of ``raw``."""
    elapsed = cpu = float('inf')
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        json_depth.within(raw, 25)
        elapsed = min(elapsed, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    return elapsed, cpu


def run(size: int, repeat: int) -> dict[str, Any]:
    best = {name: _best(raw, repeat)
            for name, raw in worst_cases(size).items()}
    seconds = {name: round(times[0], 4) for name, times in best.items()}
    slowest = max(seconds, key=seconds.__getitem__)
    return {'benchmark': 'request_scanner', 'size_bytes': size,
            'repeat': repeat, 'seconds': seconds,
            'cpu_seconds': {name: round(times[1], 4)
                            for name, times in best.items()},
            'slowest': slowest, 'slowest_seconds': seconds[slowest],
            'target_seconds': TARGET_SECONDS,
            'within_target': seconds[slowest] <= TARGET_SECONDS,
            'load_1min': round(os.getloadavg()[0], 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--size', type=int, default=_MIB,
                        help='bytes per body (default 1 MiB)')
    parser.add_argument('--repeat', type=int, default=3,
                        help='runs per case; the best counts')
    args = parser.parse_args()
    result = run(args.size, args.repeat)
    print(json.dumps(result))
    return 0 if result['within_target'] else 1


if __name__ == '__main__':
    sys.exit(main())
