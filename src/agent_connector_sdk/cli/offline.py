"""Offline review of descriptor files (placeholder replaced below)."""
