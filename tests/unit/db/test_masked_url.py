# SPDX-License-Identifier: Apache-2.0
"""The database URL as it appears in start-up errors: password masked."""

import pytest

from ferrum.db import api


@pytest.mark.parametrize('url, masked', [
    # Parseable: SQLAlchemy masks it.
    ('postgresql+psycopg2://u:pa:ss@h:5432/db',
     'postgresql+psycopg2://u:***@h:5432/db'),
    # A port that is not a number (make_url raises ValueError).
    ('postgresql+psycopg2://u:p@h:5432x/db',
     'postgresql+psycopg2://u:***@h:5432x/db'),
    ('postgresql+psycopg2://u:pa:ss@h:5432x/db',
     'postgresql+psycopg2://u:***@h:5432x/db'),
    ('postgresql+psycopg2://u:p@s:s/w@h:5432x/db',
     'postgresql+psycopg2://u:***@h:5432x/db'),
    # Not a URL at all (ArgumentError).
    ('postgres//u:pa:ss@db/ferrum', 'postgres//u:***@db/ferrum'),
    ('u:pa:ss@h', 'u:***@h'),
    ('postgres//db/ferrum', 'postgres//db/ferrum'),
])
def test_every_part_of_the_password_is_masked(url, masked):
    assert api.masked_url(url) == masked
