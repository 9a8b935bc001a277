# SPDX-License-Identifier: Apache-2.0
"""Views: objects rendered for a given microversion, one module per noun."""
