# SPDX-License-Identifier: Apache-2.0
"""The allocation core: reserve nodes for consumers, survive conductor loss."""
