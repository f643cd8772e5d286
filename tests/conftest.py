"""Shared pytest setup for all test folders (keep it small)."""
