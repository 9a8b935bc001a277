# SPDX-License-Identifier: Apache-2.0
"""Certificates made by trustme for the TLS tests, as PEM files.

``make(directory)`` writes a certificate authority, a server certificate
for 127.0.0.1 that it signed, a client certificate it signed, and a second
authority that signed nothing ferrum serves (a wrong CA).
"""

import importlib.util
import pathlib
from typing import NamedTuple

from tests.real import require_real


class Files(NamedTuple):
    ca: pathlib.Path
    cert: pathlib.Path
    key: pathlib.Path
    client_cert: pathlib.Path
    client_key: pathlib.Path
    other_ca: pathlib.Path


def make(directory: pathlib.Path) -> Files:
    """Write the files under ``directory`` (skips without trustme)."""
    if importlib.util.find_spec('trustme') is None:
        require_real('trustme')
    import trustme

    directory.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    server = ca.issue_cert('127.0.0.1', 'localhost')
    client = ca.issue_cert('ferrum-api.example.com')
    files = Files(*(directory / name for name in (
        'ca.pem', 'cert.pem', 'key.pem', 'client-cert.pem', 'client-key.pem',
        'other-ca.pem')))
    ca.cert_pem.write_to_path(str(files.ca))
    server.cert_chain_pems[0].write_to_path(str(files.cert))
    server.private_key_pem.write_to_path(str(files.key))
    client.cert_chain_pems[0].write_to_path(str(files.client_cert))
    client.private_key_pem.write_to_path(str(files.client_key))
    trustme.CA().cert_pem.write_to_path(str(files.other_ca))
    return files
