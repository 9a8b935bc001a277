# SPDX-License-Identifier: Apache-2.0
"""Request handlers, one module per noun."""
