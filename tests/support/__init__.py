"""What the test folders share, imported as `from tests.support.<module> import …`; the pytest
fixtures are in `fixtures.py` (registered in tests/conftest.py)."""
