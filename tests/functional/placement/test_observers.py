# SPDX-License-Identifier: Apache-2.0
"""``PlacementClient.observers``, the seam tests stage races and outages
at: each sees every request before it is sent, and one that raises stops
it (nothing reaches Placement)."""

import pytest

from ferrum.placement import client as client_mod
from ferrum.placement import errors


def test_observers_see_each_request_before_it_is_sent(pconf):
    seen = []
    client = client_mod.PlacementClient(
        pconf, observers=[lambda *request: seen.append(request)])
    body = {'name': 'CUSTOM_SEEN'}
    client.post('/resource_classes', body)
    # The version check first, then the request, with its body.
    assert seen == [('GET', '/', None),
                    ('POST', '/resource_classes', body)]


def test_an_observer_that_raises_stops_the_request(pconf, pclient):
    def away(method, url, body):
        if method == 'POST':
            raise errors.PlacementUnavailable(reason='staged')

    client = client_mod.PlacementClient(pconf)
    client.observers.append(away)
    with pytest.raises(errors.PlacementUnavailable, match='staged'):
        client.post('/resource_classes', {'name': 'CUSTOM_NEVER_SENT'})
    assert client.requests == {'GET': 1}  # the version check alone
    assert pclient.get('/resource_classes/CUSTOM_NEVER_SENT',
                       not_found_ok=True) is None
