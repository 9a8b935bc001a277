# SPDX-License-Identifier: Apache-2.0
"""Leases: time-bound, all-or-nothing reservations of nodes (doc/leases.md)."""
