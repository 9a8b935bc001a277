# SPDX-License-Identifier: Apache-2.0
"""The JSON-RPC transport between ``ferrum-api`` and ``ferrum-conductor``."""
