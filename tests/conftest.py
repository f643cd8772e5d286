"""Shared pytest setup for all test folders (keep it small): the fixtures in tests/support."""

pytest_plugins = ["tests.support.fixtures"]
