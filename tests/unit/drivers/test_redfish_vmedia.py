# SPDX-License-Identifier: Apache-2.0
"""The ISO URLs of the redfish-virtual-media boot interface, checked
without I/O (the interface itself: tests/functional/redfish)."""

import pytest

from ferrum.common import exception
from ferrum.drivers.redfish import vmedia

URL = 'https://images.example/deploy.iso'


def test_deploy_iso_wins_over_the_old_name_which_is_still_read():
    assert vmedia.deploy_iso({'deploy_iso': URL}) == (
        URL, 'driver_info deploy_iso')
    assert vmedia.deploy_iso({'redfish_deploy_iso': URL}) == (
        URL, 'driver_info redfish_deploy_iso')
    assert vmedia.deploy_iso({'deploy_iso': URL,
                              'redfish_deploy_iso': 'http://old/x.iso'}
                             ) == (URL, 'driver_info deploy_iso')
    # A wrong old name is named as such.
    with pytest.raises(exception.InvalidParameterValue,
                       match='driver_info redfish_deploy_iso'):
        vmedia.deploy_iso({'redfish_deploy_iso': 'nfs://x/y.iso'})


@pytest.mark.parametrize('value', [
    ' %s ' % URL, 'http://10.0.0.5:8080/a/b.iso?token=a@b',
    'http://[fd00::5]/boot.iso'])
def test_good_urls(value):
    assert vmedia.boot_iso({'boot_iso': value}) == value.strip()


@pytest.mark.parametrize('value, message', [
    ('', 'is required'), ('   ', 'is required'),
    (['http://a/b.iso'], 'not list'),
    ('images.example/boot.iso', 'http:// or https://'),
    ('http:///boot.iso', 'with a host'),
    ('http://a/b c.iso', 'with a host'),
    ('https://admin:pw@images.example/b.iso', 'must not hold credentials'),
    ('http:/admin:pw@images.example/b.iso', 'not repeated'),
    ('http://images.example/b\t.iso', 'with a host'),
])
def test_bad_urls_name_the_field(value, message):
    with pytest.raises(exception.Invalid) as caught:
        vmedia.boot_iso({'boot_iso': value})
    assert 'instance_info boot_iso' in str(caught.value)
    assert message in str(caught.value)
    assert caught.value.code == 400
    assert 'pw@' not in str(caught.value)
