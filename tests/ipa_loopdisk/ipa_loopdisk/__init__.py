# SPDX-License-Identifier: Apache-2.0
"""The agent tests' hardware manager for ironic-python-agent: see
:mod:`ipa_loopdisk.manager`."""
