# SPDX-License-Identifier: Apache-2.0
"""How deeply a JSON document nests, found without parsing it.

Python's ``json`` parser recurses once per nesting level, so a body of a
few thousand ``[`` exhausts the stack (``RecursionError``) before any
schema can refuse it. Ironic therefore scans the raw bytes first; so does
ferrum, for the REST API and the JSON-RPC endpoint alike.

The scan is one regular expression over the bytes: strings (where brackets
do not count) are skipped whole, runs of brackets are counted. It stops at
the first level past the limit, so the deepest attack costs nothing, and a
1 MiB body of shallow structure takes about 0.1 s.
"""

import re

#: A JSON string (escapes included), or a run of brackets.
_TOKENS = re.compile(rb'"(?:[^"\\]+|\\.)*"|[\[\]{}]+')
_OPEN = frozenset(b'[{')


def within(raw: bytes, max_depth: int) -> bool:
    """Whether ``raw`` nests arrays and objects at most ``max_depth`` deep.

    ``raw`` need not be valid JSON: the parser that runs afterwards says
    what else is wrong with it.
    """
    depth = 0
    for match in _TOKENS.finditer(raw):
        run = match.group()
        if run[0] == 0x22:  # a string
            continue
        for byte in run:
            if byte in _OPEN:
                depth += 1
                if depth > max_depth:
                    return False
            else:
                depth -= 1
    return True
