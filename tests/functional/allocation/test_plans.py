# SPDX-License-Identifier: Apache-2.0
"""PostgreSQL plans of the candidate sample, before autovacuum analyzed.

Right after a fleet is enrolled the planner's statistics say the tables
are nearly empty. The trait test must stay a per-node primary-key probe
then: as a join it compared every free node with every node holding the
trait (measured: 49 ms per sample at 1,000 nodes, 2 ms as a probe).
"""

import pytest
import sqlalchemy as sa

from ferrum.allocation import candidates
from ferrum.db import api as db_api
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj

_NODE = {'driver': 'fake-hardware', 'provision_state': 'available',
         'power_state': 'power off', 'resource_class': 'bench'}


def _plan(pg_db: db_api.Database, statement: sa.Select,  # type: ignore[type-arg]
          params: dict) -> str:  # type: ignore[type-arg]
    with pg_db.engine.connect() as conn:
        compiled = statement.compile(dialect=conn.dialect)
        cursor = conn.connection.cursor()
        cursor.execute('EXPLAIN ' + str(compiled),
                       compiled.construct_params(params))
        return '\n'.join(row[0] for row in cursor.fetchall())


@pytest.mark.parametrize('traits', [1, 3])
def test_trait_test_is_a_probe_without_statistics(
        pg_db: db_api.Database, traits: int) -> None:
    wanted = ['CUSTOM_T%d' % index for index in range(traits)]
    with pg_db.engine.begin() as conn:
        # Autovacuum must not analyze them while the test looks.
        for table in ('nodes', 'node_traits'):
            conn.execute(sa.text(
                'ALTER TABLE %s SET (autovacuum_enabled = false)' % table))
    for _ in range(200):
        node = node_obj.Node.create(pg_db, _NODE)
        trait_obj.set_for_node(pg_db, node.id, wanted)
    with pg_db.engine.connect() as conn:
        analyzed = conn.execute(sa.text(
            "SELECT count(*) FROM pg_stat_user_tables WHERE relname IN "
            "('nodes', 'node_traits') AND (last_analyze IS NOT NULL OR "
            "last_autoanalyze IS NOT NULL)")).scalar()
    assert analyzed == 0, 'the tables have statistics; the test saw nothing'
    requirements = candidates.requirements('bench', wanted)
    params = dict(requirements.params, b_fraction=0.5, b_limit=32)
    for statement in (requirements.statements.from_pivot,
                      requirements.statements.before_pivot):
        plan = _plan(pg_db, statement, params)
        assert 'Join' not in plan, plan
        assert plan.count('SubPlan') >= traits, plan
        assert 'node_traits_pkey' in plan, plan
