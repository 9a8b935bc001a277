# SPDX-License-Identifier: Apache-2.0
"""The committed policy sample is what oslopolicy-sample-generator writes
from ferrum's rules now, and the entry point it reads names them."""

import configparser
import os

from oslo_policy import generator

from ferrum.api import policy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
SAMPLE = os.path.join(ROOT, 'etc', 'ferrum', 'policy.yaml.sample')


def test_policy_sample_is_current():
    # What "oslopolicy-sample-generator --namespace ferrum" writes, without
    # depending on which checkout the venv's entry points were installed
    # from.
    written = ''.join(generator._sort_and_format_by_section(
        {'ferrum': policy.list_rules()}, include_help=True))
    with open(SAMPLE) as committed:
        assert committed.read() == written, (
            'etc/ferrum/policy.yaml.sample is stale: run "make genconfig" '
            'and commit the result')


def test_the_policy_entry_point_names_the_rules():
    setup = configparser.ConfigParser()
    setup.read(os.path.join(ROOT, 'setup.cfg'))
    points = setup['options.entry_points']
    assert points['oslo.policy.policies'].split() == [
        'ferrum', '=', 'ferrum.api.policy:list_rules']
    assert points['oslo.policy.enforcer'].split() == [
        'ferrum', '=', 'ferrum.api.policy:sample_enforcer']


def test_every_rule_has_a_description_and_unique_name():
    names = [rule.name for rule in policy.list_rules()]
    assert len(names) == len(set(names))
    assert all(rule.description for rule in policy.list_rules())
