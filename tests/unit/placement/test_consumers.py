# SPDX-License-Identifier: Apache-2.0
"""The consumer writer's pure rules: the generations sent after a
conflict, the providers a write is recorded against, and its body."""

import pytest

from ferrum.placement.resources import consumers

Consumer = consumers.Consumer
Holding = consumers.Holding


def test_a_consumer_read_with_a_generation_is_sent_it():
    current = {'a': Consumer('a', {'rp': {'X': 1}}, 7)}
    assert consumers.retry_generations(current, {'a': 6}) == {'a': 7}


def test_an_empty_consumer_alternates_none_and_zero():
    # Placement hides generation 0 of an empty consumer a refused write
    # created; a consumer that does not exist refuses 0.
    current = {'a': Consumer('a', {})}
    assert consumers.retry_generations(current, {'a': None}) == {'a': 0}
    assert consumers.retry_generations(current, {'a': 0}) == {'a': None}


def test_an_empty_consumer_keeps_its_generation_when_another_moved():
    current = {'new': Consumer('new', {}),
               'lease': Consumer('lease', {'rp': {'X': 1}}, 4)}
    sent = {'new': None, 'lease': 3}
    assert consumers.retry_generations(current, sent) == {
        'new': None, 'lease': 4}


def test_an_empty_consumer_flips_when_the_other_did_not_move():
    current = {'new': Consumer('new', {}),
               'lease': Consumer('lease', {'rp': {'X': 1}}, 3)}
    sent = {'new': None, 'lease': 3}
    assert consumers.retry_generations(current, sent) == {
        'new': 0, 'lease': 3}


def test_touched_counts_new_allocations_or_the_emptied_ones():
    current = {'a': Consumer('a', {'rp1': {'X': 1}}, 1),
               'b': Consumer('b', {'rp2': {'X': 1}, 'rp3': {'X': 1}}, 1)}
    written = {'a': Holding({}, 'p', 'u'),
               'b': Holding({'rp3': {'X': 1}, 'rp4': {'X': 1}}, 'p', 'u')}
    # rp2, let go of while b holds others, is not counted: a record
    # behind Placement costs a read, one ahead could hide a write.
    assert consumers.touched(current, written) == {'rp1', 'rp3', 'rp4'}


def test_the_body_carries_each_consumer_s_generation():
    current = {'a': Consumer('a', {}), 'b': Consumer('b', {'rp': {}}, 2)}
    body = consumers.body(current, {'a': Holding({'rp': {'X': 1}}, 'p', 'u'),
                                    'b': Holding({}, 'q', 'u')},
                          {'a': None, 'b': 2})
    assert body == {
        'a': {'allocations': {'rp': {'resources': {'X': 1}}},
              'consumer_generation': None, 'project_id': 'p',
              'user_id': 'u'},
        'b': {'allocations': {}, 'consumer_generation': 2,
              'project_id': 'q', 'user_id': 'u'}}


def test_a_write_may_only_change_consumers_it_read():
    with pytest.raises(ValueError, match='not b'):
        consumers.body({'a': Consumer('a', {})},
                       {'b': Holding({}, 'p', 'u')}, {'a': None})


def test_ours_and_foreign_look_at_what_a_consumer_holds():
    held = Consumer('a', {'rp': {'X': 1}}, 1, 'p', 'ferrum')
    assert held.ours('ferrum') and not held.foreign('ferrum')
    assert held.foreign('nova')
    # An empty consumer is nobody's.
    assert not Consumer('a', {}, None, 'p', 'nova').foreign('ferrum')
