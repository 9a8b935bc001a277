# SPDX-License-Identifier: Apache-2.0
"""What a lease of one node says about its nodes: "1 node", never
"1 nodes" (the counts go through ferrum.common.plural)."""

import datetime
import logging

from ferrum.leases import engine
from tests.functional.leases.sites import fault
from tests.functional.leases.sites import iso
from tests.functional.leases.sites import run_and_clean


def test_one_node_lease_logs_agree(site, caplog):
    node = site.nodes(1)[0]
    lease = site.post(project='p', candidate_nodes=[node.uuid],
                      end=site.later(3600)).json
    caplog.set_level(logging.INFO, logger='ferrum.leases')
    engine.run(site.conductor.ctx)
    assert 'project p holds 1 node until' in caplog.text
    assert site.client.delete('/v1/leases/%s' % lease['uuid']).status_code \
        == 204
    run_and_clean(site, [node])
    assert 'ended, its 1 node is back' in caplog.text
    assert '1 nodes' not in caplog.text


def test_one_node_refusals_agree(site):
    site.nodes(1, resource_class='silver')
    resp = site.post(project='p', resource_class='silver', count=2,
                     end=site.later(3600))
    assert resp.status_code == 409
    assert '1 node has resource class "silver"' in fault(resp)
    lone = site.nodes(1, maintenance=True)[0]
    resp = site.post(project='p', candidate_nodes=[lone.uuid],
                     end=site.later(3600))
    assert resp.status_code == 409
    assert '1 node is among the 1 candidate node;' in fault(resp)
    a, b = site.nodes(2)
    resp = site.post(project='p', candidate_nodes=[a.uuid], count=2,
                     end=site.later(3600))
    assert resp.status_code == 400
    assert 'more than the 1 candidate node given' in fault(resp)
    start = site.clock() + datetime.timedelta(hours=1)
    first = site.post(project='p', candidate_nodes=[a.uuid],
                      start=iso(start),
                      end=iso(start + datetime.timedelta(hours=1))).json
    site.post(project='q', candidate_nodes=[a.uuid],
              start=iso(start + datetime.timedelta(hours=2)),
              end=iso(start + datetime.timedelta(hours=3)))
    resp = site.client.patch('/v1/leases/%s' % first['uuid'], json=[
        {'op': 'replace', 'path': '/end',
         'value': iso(start + datetime.timedelta(hours=4))}])
    assert resp.status_code == 409
    assert '1 of its nodes is booked by other leases' in fault(resp)
