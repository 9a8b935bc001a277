# SPDX-License-Identifier: Apache-2.0
"""The agent deploy: ferrum talking to ironic-python-agent on a node.

:mod:`.client` is the one module that speaks the agent's HTTP API (as
sushy is for Redfish); :mod:`.errors` holds what its failures become.
"""
