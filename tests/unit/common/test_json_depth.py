# SPDX-License-Identifier: Apache-2.0
"""The request scanner: the depth it finds, and a cost linear in the input.

The scan runs on every body before authentication (issue 27: a regular
expression that backtracked made a 40-byte unterminated string cost
hours), so its cost is measured here on the worst cases the benchmark
uses (tools/bench/request_scanner.py), at two sizes.
"""

import json
import time
import tracemalloc

import hypothesis
import pytest
from hypothesis import strategies as st

from ferrum.common import json_depth
from tools.bench import request_scanner

KIB = 1024


@pytest.mark.parametrize('raw, depth', [
    (b'', 0), (b'1', 0), (b'"x"', 0), (b'[]', 1), (b'{"a": [1]}', 2),
    (b'[' * 26 + b']' * 26, 26), (b'[[]][[[]]]', 3),
    # Brackets inside strings, escaped quotes and backslashes included.
    (b'{"a": "[[[[{{{{"}', 1), (b'["\\"[[[["]', 1), (b'["\\\\", [[]]]', 3),
    (b'["\\u005b[[[", [1]]', 2),
    # More closers than openers: the running depth starts again from 0
    # (the parser refuses the stray closer anyway).
    (b']]]][[[]]]', 0),
])
def test_depth(raw, depth):
    assert json_depth.within(raw, depth)
    assert json_depth.within(raw, depth + 1)
    if depth:
        assert not json_depth.within(raw, depth - 1)


@pytest.mark.parametrize('raw', [
    b'[[["[[[[[[', b'[[["\\"[[[[[[[', b'[[["[[[[[[\\', b'[[["\\\\\\"[[[[',
])
def test_unterminated_string_runs_to_the_end(raw):
    """No bracket after an unterminated string's quote counts: the parser
    stops at the string and never recurses on them."""
    assert json_depth.within(raw, 3)
    assert not json_depth.within(raw, 2)


def _depth(value):
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_TEXT = st.text(alphabet='[]{}"\\ax\u00e9\n', max_size=8)
_DOCUMENTS = st.recursive(
    st.none() | st.integers() | _TEXT,
    lambda children: (st.lists(children, max_size=3)
                      | st.dictionaries(_TEXT, children, max_size=3)),
    max_leaves=20)


@hypothesis.settings(max_examples=300, deadline=None, database=None)
@hypothesis.given(document=_DOCUMENTS, ascii_only=st.booleans())
def test_depth_agrees_with_the_parser(document, ascii_only):
    """On any valid document the scan finds the depth the parser builds."""
    raw = json.dumps(document, ensure_ascii=ascii_only).encode()
    depth = _depth(document)
    assert json_depth.within(raw, depth)
    assert depth == 0 or not json_depth.within(raw, depth - 1)


def _best_of(raw, runs=3):
    # CPU time: a busy machine delays the scan, it does not make it cost
    # more.
    best = float('inf')
    for _ in range(runs):
        started = time.process_time()
        json_depth.within(raw, 25)
        best = min(best, time.process_time() - started)
    return best


# A backtracking regression would not finish at all (hours): fail instead.
@pytest.mark.timeout(60)
@pytest.mark.parametrize('case', sorted(request_scanner.worst_cases(64)))
def test_cost_is_linear_in_the_size(case):
    """16 times the input costs at most 4 x 16 times the time (a factor
    and a slack generous enough for a loaded machine; super-linear costs
    are far beyond: quadratic is 256 times, exponential never ends)."""
    small = request_scanner.worst_cases(64 * KIB)[case]
    large = request_scanner.worst_cases(1024 * KIB)[case]
    assert 15 * len(small) < len(large) < 17 * len(small)
    t_small, t_large = _best_of(small), _best_of(large)
    assert t_large <= 16 * 4 * t_small + 0.25, (t_small, t_large)


@pytest.mark.parametrize('case', sorted(request_scanner.worst_cases(64)))
def test_memory_is_bounded_by_the_size(case):
    """At most about twice the body beyond it (a slice and its brackets),
    however many strings it holds (re.sub over a body of 500,000 empty
    strings held 60 MB at once)."""
    raw = request_scanner.worst_cases(1024 * KIB)[case]
    tracemalloc.start()
    try:
        json_depth.within(raw, 25)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 2.5 * len(raw), peak


def _values(raw, max_depth=25):
    """The least ``max_values`` that ``raw`` is within."""
    assert json_depth.excess(raw, max_depth) is None
    count = 1
    while json_depth.excess(raw, max_depth, count) is json_depth.Bound.VALUES:
        count += 1
    return count


@pytest.mark.parametrize('raw, values', [
    (b'1', 1), (b'"x"', 1), (b'[1, 2, 3]', 4), (b'{"a": 1, "b": [2]}', 6),
    (b'[[1], {"k": "v"}]', 6),
    # Commas, colons and brackets inside strings, escaped quotes included.
    (b'["a,b:c", "[{,:}]"]', 3), (b'{"k\\":,": "\\\\", "l": ","}', 5),
    (b'["\\",\\",\\"", 1]', 3), (b'["\\u002c,", 2]', 3),
    # An unterminated string runs to the end: nothing after its quote.
    (b'[1, "a,b,c:d:[', 3), (b'[1, "\\",,,,\\', 3),
    # An empty array or object counts one value too many.
    (b'[]', 2), (b'{}', 2),
])
def test_values(raw, values):
    assert _values(raw) == values


@hypothesis.settings(max_examples=300, deadline=None, database=None)
@hypothesis.given(document=_DOCUMENTS, ascii_only=st.booleans())
def test_values_bound_what_the_parser_builds(document, ascii_only):
    """The count is never below the values (and keys) the parser builds,
    and exceeds them by the empty arrays and objects at most."""
    def built(value):
        if isinstance(value, dict):
            return 1 + sum(1 + built(item) for item in value.values())
        if isinstance(value, list):
            return 1 + sum(map(built, value))
        return 1

    def empty(value):
        children = (list(value.values()) if isinstance(value, dict)
                    else value if isinstance(value, list) else None)
        if children is None:
            return 0
        return (not children) + sum(map(empty, children))

    raw = json.dumps(document, ensure_ascii=ascii_only).encode()
    assert _values(raw) == built(document) + empty(document)


def test_values_are_counted_across_windows():
    """A body of more strings than one window holds (4,096) is counted
    whole, and refused as soon as the count passes the bound."""
    raw = b'[' + b'"a",' * 10000 + b'"a"]'
    assert json_depth.excess(raw, 25, 10002) is None
    assert json_depth.excess(raw, 25, 10001) is json_depth.Bound.VALUES


def test_depth_is_found_before_values():
    raw = b'[' * 30 + b'1,' * 100
    assert json_depth.excess(raw, 25, 10) is json_depth.Bound.DEPTH
