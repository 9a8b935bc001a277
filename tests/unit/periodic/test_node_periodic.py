# SPDX-License-Identifier: Apache-2.0
"""@node_periodic: filters, predicate, limit, lock handling and Stop."""

from ferrum.common import states
from ferrum.objects import node as node_obj
from ferrum.periodic import decorators
from tests.functional.conductor.flows import enroll
from tests.functional.conductor.flows import to_state


class Checker:
    def __init__(self):
        self.seen = []

    @decorators.node_periodic(
        purpose='test check', spacing=lambda conf: 30,
        filters={'provision_state': states.MANAGEABLE},
        predicate=lambda row: not row.maintenance)
    def check(self, task):
        self.seen.append(task.node.uuid)
        assert task.shared

    @decorators.node_periodic(purpose='limited', spacing=lambda conf: 30,
                              limit=lambda conf: 2, shared=False)
    def limited(self, task):
        self.seen.append(task.node.uuid)
        task.node.extra['visited'] = True

    @decorators.node_periodic(purpose='stopper', spacing=lambda conf: 30)
    def stopper(self, task):
        self.seen.append(task.node.uuid)
        raise decorators.Stop()


def test_filters_predicate_and_locked_nodes(conductor, db):
    manager = conductor.manager
    wanted = to_state(manager, db, enroll(manager), 'manageable')
    in_maintenance = to_state(manager, db, enroll(manager), 'manageable')
    manager.set_maintenance(in_maintenance.uuid, True)
    locked = to_state(manager, db, enroll(manager), 'manageable')
    node_obj.Node.reserve(db, 'someone-else', locked.id)
    enroll(manager)  # wrong state
    checker = Checker()
    checker.check(conductor.ctx)
    # The locked node is visited too: a shared task takes no lock.
    assert sorted(checker.seen) == sorted([wanted.uuid, locked.uuid])


def test_exclusive_skips_locked_and_respects_limit(conductor, db):
    manager = conductor.manager
    nodes = [enroll(manager) for _ in range(4)]
    node_obj.Node.reserve(db, 'someone-else', nodes[0].id)
    checker = Checker()
    checker.limited(conductor.ctx)
    assert checker.seen == [nodes[1].uuid, nodes[2].uuid]
    assert node_obj.Node.get(db, nodes[1].id).extra == {'visited': True}
    assert node_obj.Node.get(db, nodes[1].id).reservation is None


def test_stop_ends_the_run(conductor, db):
    for _ in range(3):
        enroll(conductor.manager)
    checker = Checker()
    checker.stopper(conductor.ctx)
    assert len(checker.seen) == 1


def test_spacing_is_read_from_config_when_collected(conf):
    from ferrum.periodic import worker
    specs = {name: spec for _obj, name, spec in worker.collect([Checker()])}
    assert specs['check'].spacing(conf) == 30
