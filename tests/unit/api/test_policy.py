# SPDX-License-Identifier: Apache-2.0
"""The Authorizer: oslo.policy's decisions, each evaluated once per rule
set (an evaluation of one of Ironic's check strings costs a third of a
millisecond), and evaluated again once the policy file changed."""

import os

from ferrum import conf as conf_mod
from ferrum.api import policy

LESSEE = {'project_id': 'b' * 32, 'roles': ['member', 'reader'],
          'system_scope': None, 'user_id': 'u'}
NODE = {'node.owner': 'a' * 32, 'node.lessee': 'b' * 32}


def _authorizer(tmp_path, text=None):
    conf = conf_mod.new_conf()
    if text is not None:
        path = tmp_path / 'policy.yaml'
        path.write_text(text)
        conf.set_override('policy_file', str(path), group='oslo_policy')
    authorizer = policy.Authorizer(policy.enforcer(conf))
    evaluated = []
    enforce = authorizer.enforcer.enforce

    def counted(rule, target, creds):
        evaluated.append(rule)
        return enforce(rule, target, creds)
    authorizer.enforcer.enforce = counted
    return authorizer, evaluated


def test_a_decision_is_evaluated_once_per_rule_set(tmp_path):
    authorizer, evaluated = _authorizer(tmp_path)
    for _ in range(3):
        authorizer.refresh()
        assert authorizer.allowed('baremetal:node:get', NODE, LESSEE)
        assert not authorizer.allowed('baremetal:node:update:driver_info',
                                      NODE, LESSEE)
    assert evaluated == ['baremetal:node:get',
                         'baremetal:node:update:driver_info']
    # Another target or caller is another decision.
    assert not authorizer.allowed('baremetal:node:get',
                                  {'node.owner': 'c' * 32}, LESSEE)
    assert len(evaluated) == 3


def test_a_changed_policy_file_forgets_the_decisions(tmp_path):
    authorizer, evaluated = _authorizer(
        tmp_path, '"baremetal:node:get": "role:admin"\n')
    authorizer.refresh()
    assert not authorizer.allowed('baremetal:node:get', NODE, LESSEE)
    path = tmp_path / 'policy.yaml'
    path.write_text('"baremetal:node:get": "role:reader"\n')
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    authorizer.refresh()
    assert authorizer.allowed('baremetal:node:get', NODE, LESSEE)
    assert evaluated == ['baremetal:node:get', 'baremetal:node:get']


def test_a_decision_made_on_replaced_rules_is_not_kept(tmp_path):
    """A request evaluating while another one's refresh() replaces the
    rules (an operator revoking a rule) must not leave its decision among
    the new rules' decisions."""
    path = tmp_path / 'policy.yaml'
    authorizer, evaluated = _authorizer(
        tmp_path, '"baremetal:node:get": "role:reader"\n')
    authorizer.refresh()
    enforce = authorizer.enforcer.enforce

    def revoked_meanwhile(rule, target, creds):
        decided = enforce(rule, target, creds)
        path.write_text('"baremetal:node:get": "role:admin"\n')
        stat = os.stat(path)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        authorizer.refresh()
        return decided
    authorizer.enforcer.enforce = revoked_meanwhile
    assert authorizer.allowed('baremetal:node:get', NODE, LESSEE)
    authorizer.enforcer.enforce = enforce
    assert not authorizer.allowed('baremetal:node:get', NODE, LESSEE)
