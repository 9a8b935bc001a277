# SPDX-License-Identifier: Apache-2.0
from ferrum.common import plural


def test_one_takes_the_singular():
    assert plural.count(1, 'node') == '1 node'
    assert plural.count(1, 'node is', 'nodes are') == '1 node is'


def test_every_other_number_takes_the_plural():
    assert [plural.count(n, 'node') for n in (0, 2, 11)] == [
        '0 nodes', '2 nodes', '11 nodes']
    assert plural.count(3, 'node is', 'nodes are') == '3 nodes are'
    assert plural.count(2, 'class', 'classes') == '2 classes'
