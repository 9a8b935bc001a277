# SPDX-License-Identifier: Apache-2.0
"""Hardware types and interfaces: the contract, the loader, in-tree drivers."""
