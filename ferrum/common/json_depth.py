# SPDX-License-Identifier: Apache-2.0
"""How deeply a JSON document nests, and how many values it holds, found
without parsing it.

Python's ``json`` parser recurses once per nesting level, so a body of a
few thousand ``[`` exhausts the stack (``RecursionError``) before any
schema can refuse it. Ironic therefore scans the raw bytes first; so does
ferrum, for the REST API and the JSON-RPC endpoint alike. The same scan
counts the values: a 1 MiB body of ``"",`` is valid JSON up to its last
byte, and the parser builds some 350,000 values from it before any schema
sees it (issue 27: that churn of small objects left the API's heap
fragmented), so a caller can refuse a body of more values than any real
request holds.

The scan runs before authentication, on whatever a client sends, so its
cost must be linear in the body's length for every input (issue 27: a
regular expression that backtracked took hours over a 40-byte unterminated
string), and so must its memory. It works at C speed and never
backtracks: strings (where brackets, commas and colons do not count) are
cut out, every byte but a bracket, comma or colon is dropped, the values
are counted from what is left and the running depth over its brackets is
summed; a window of a few thousand strings at a time, because ``re.sub``
holds some 100 bytes per piece until it joins them (a body of empty
strings would cost some 60 times its size). Measured worst cases at 1 MiB
(doc/performance/hostile-input.md, issue 27): under 0.05 s of CPU
each, the commonest (one long string) about 0.005 s; memory beyond the
body at most twice its size (a slice, and what is left of it).
"""

import enum
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
#: Every byte but the four brackets, the comma and the colon, for
#: ``bytes.translate`` to delete.
_NOT_TOKENS = bytes(byte for byte in range(256) if byte not in b'[]{},:')
#: How each bracket moves the depth (other bytes are gone by then).
_STEP = [1 if byte in b'[{' else -1 if byte in b']}' else 0
         for byte in range(256)]


class Bound(enum.Enum):
    """The bound a document exceeds."""

    DEPTH = 'depth'
    VALUES = 'values'


def excess(raw: bytes, max_depth: int, max_values: int = 0) -> Bound | None:
    """The bound ``raw`` exceeds, or None when it is within both.

    ``raw`` need not be valid JSON: the parser that runs afterwards says
    what else is wrong with it. A bracket, comma or colon inside a string,
    closed or not, does not count: the parser never recurses on it nor
    builds a value from it.

    The values (object keys included) are counted as the parser could
    build them: one for the document, one more per comma and colon, and
    one more per array or object (its first member). That is exact for
    valid JSON without empty arrays or objects (each of those counts one
    too many); on invalid JSON the parser fails before it builds more.

    :param max_depth: how deep arrays and objects may nest.
    :param max_values: how many values the document may hold; 0 for no
        bound.
    """
    depth = 0
    values = 1  # the document itself
    start = 0
    while start < len(raw):
        window = _WINDOW.match(raw, start)
        end = window.end() if window else len(raw)  # no string is left
        tokens = _STRING.sub(b'', raw[start:end]).translate(None, _NOT_TOKENS)
        opened = tokens.count(b'[') + tokens.count(b'{')
        # Too few brackets to go deeper: no need to sum them one by one.
        if depth + opened > max_depth and max(itertools.accumulate(
                map(_STEP.__getitem__, tokens.translate(None, b',:')),
                initial=depth)) > max_depth:
            return Bound.DEPTH
        closed = tokens.count(b']') + tokens.count(b'}')
        depth += opened - closed
        values += opened + tokens.count(b',') + tokens.count(b':')
        if max_values and values > max_values:
            return Bound.VALUES
        start = end
    return None


def within(raw: bytes, max_depth: int) -> bool:
    """Whether ``raw`` nests arrays and objects at most ``max_depth`` deep
    (see :func:`excess`)."""
    return excess(raw, max_depth) is None
