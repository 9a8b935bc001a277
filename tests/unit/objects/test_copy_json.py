# SPDX-License-Identifier: Apache-2.0
"""base.copy_json: a private copy, whatever a JSON column holds."""

import datetime

from ferrum.objects import base


def test_nested_values_are_copied_and_scalars_kept():
    value = {'a': [1, 2.5, {'b': None, 'c': True}], 'd': 'text'}
    copied = base.copy_json(value)
    assert copied == value
    copied['a'][2]['b'] = 'changed'
    copied['a'].append(3)
    assert value == {'a': [1, 2.5, {'b': None, 'c': True}], 'd': 'text'}


def test_other_containers_are_deep_copied():
    inner = [1]
    when = datetime.datetime(2026, 12, 4)
    value = {'t': (inner,), 'when': when}
    copied = base.copy_json(value)
    assert copied == value
    # A tuple holding a list is copied as deepcopy copies it.
    copied['t'][0].append(2)
    assert inner == [1]
