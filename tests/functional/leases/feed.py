# SPDX-License-Identifier: Apache-2.0
"""What the event feed's tests share: a follower."""


def follow(client, since=0, limit=3):
    """Every event after ``since``, page by page through ``next``."""
    events = []
    url = '/v1/events?since=%d&limit=%d' % (since, limit)
    while True:
        response = client.get(url)
        assert response.status_code == 200, response.get_data(as_text=True)
        body = response.json
        events += body['events']
        if not body['events']:
            return events
        url = body['next']
