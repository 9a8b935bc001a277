# SPDX-License-Identifier: Apache-2.0
"""The config drive the agent writes: passed through, or built as Ironic
builds it from metalsmith's and nova's dict."""

import base64
import gzip
import shutil

import pytest

from ferrum.common import exception
from ferrum.drivers.agent import configdrive
from tests.real import require_real


def test_text_and_nothing_pass_through():
    assert configdrive.for_agent('H4sIAAAA', 'n') == 'H4sIAAAA'
    assert configdrive.for_agent('https://cd.example/x', 'n') == (
        'https://cd.example/x')
    assert configdrive.for_agent(None, 'n') is None
    assert configdrive.for_agent('', 'n') is None


def test_anything_else_is_refused():
    with pytest.raises(exception.InvalidParameterValue) as caught:
        configdrive.for_agent(['x'], 'n')
    assert 'meta_data' in str(caught.value)


def test_a_dict_becomes_a_config_2_iso():
    if shutil.which('genisoimage') is None:
        require_real('genisoimage')
    built = configdrive.for_agent(
        {'meta_data': {'uuid': 'u-1', 'hostname': 'h'},
         'user_data': '#cloud-config\n', 'network_data': {'links': []}},
        'node-1')
    iso = gzip.decompress(base64.b64decode(built))
    # ISO 9660: the primary volume descriptor at sector 16 names the label
    # that cloud-init looks for.
    descriptor = iso[16 * 2048:17 * 2048]
    assert descriptor[1:6] == b'CD001'
    assert descriptor[40:72].decode().strip() == 'config-2'
    assert b'hostname' in iso and b'#cloud-config' in iso


def test_a_missing_tool_is_named(monkeypatch):
    monkeypatch.setattr(shutil, 'which', lambda _name: None)
    with pytest.raises(exception.DriverError) as caught:
        configdrive.for_agent({'meta_data': {}}, 'node-1')
    assert 'genisoimage' in str(caught.value)
