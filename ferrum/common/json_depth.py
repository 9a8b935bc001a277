# SPDX-License-Identifier: Apache-2.0
"""How deeply a JSON document nests, found without parsing it.

Python's ``json`` parser recurses once per nesting level, so a body of a
few thousand ``[`` exhausts the stack (``RecursionError``) before any
schema can refuse it. Ironic therefore scans the raw bytes first; so does
ferrum, for the REST API and the JSON-RPC endpoint alike.

The scan runs before authentication, on whatever a client sends, so its
cost must be linear in the body's length for every input (issue 27: a
regular expression that backtracked took hours over a 40-byte unterminated
string), and so must its memory. It works at C speed and never
backtracks: strings (where brackets do not count) are cut out, every
byte but a bracket is dropped, and the running depth over what is left is
summed; a window of a few thousand strings at a time, because ``re.sub``
holds some 100 bytes per piece until it joins them (a body of empty
strings would cost some 60 times its size). Measured worst cases at 1 MiB
(doc/performance.md, "Issue 27: request scanner"): under 0.05 s of CPU
each, the commonest (one long string) about 0.005 s; memory
beyond the body at most twice its size (a slice, and its brackets).
"""

import itertools
import re

#: A JSON string, from its opening quote to its closing quote or, when it
#: has none, to the end of the input. The possessive quantifiers (Python
#: 3.11) never give back what they matched, so the engine cannot try the
#: exponentially many ways to split a run of characters between the two
#: alternatives; the two alternatives also never start on the same byte.
#: ``\\.?`` takes an escape, or a lone backslash at the very end. The
#: optional closing quote lets an unterminated string run to the end: a
#: string that had to close would, failing, be retried from every later
#: quote inside it, which is quadratic over ``"\"\"\"...``.
_STRING_SOURCE = rb'"(?:[^"\\]++|\\.?)*+"?'
_STRING = re.compile(_STRING_SOURCE, re.DOTALL)
#: The input up to the end of its next 4,096 strings (or fewer, at the
#: end): a window that starts and ends outside any string.
_WINDOW = re.compile(rb'(?:[^"]*+' + _STRING_SOURCE + rb'){1,4096}+',
                     re.DOTALL)
#: Every byte but the four brackets, for ``bytes.translate`` to delete.
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b'[]{}')
#: How each bracket moves the depth (other bytes are gone by then).
_STEP = [1 if byte in b'[{' else -1 if byte in b']}' else 0
         for byte in range(256)]


def within(raw: bytes, max_depth: int) -> bool:
    """Whether ``raw`` nests arrays and objects at most ``max_depth`` deep.

    ``raw`` need not be valid JSON: the parser that runs afterwards says
    what else is wrong with it. A bracket inside a string, closed or not,
    does not count: the parser never recurses on it.
    """
    depth = 0
    start = 0
    while start < len(raw):
        window = _WINDOW.match(raw, start)
        end = window.end() if window else len(raw)  # no string is left
        brackets = _STRING.sub(b'', raw[start:end]).translate(
            None, _NOT_BRACKETS)
        # Too few brackets to go deeper: no need to sum them one by one.
        if depth + len(brackets) > max_depth and max(itertools.accumulate(
                map(_STEP.__getitem__, brackets), initial=depth)) > max_depth:
            return False
        opened = brackets.count(b'[') + brackets.count(b'{')
        depth += opened - (len(brackets) - opened)
        start = end
    return True
