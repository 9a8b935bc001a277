# SPDX-License-Identifier: Apache-2.0
"""JSON Schemas of request bodies, one module per noun."""
