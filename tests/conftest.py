"""Shared pytest setup for all test folders (keep it small): the fixtures in tests/support and
Hypothesis's profiles.

Properties run the same examples on every machine by default ("repeatable": derandomized, no
example database), so CI and a laptop agree on what passed. `HYPOTHESIS_PROFILE=explore`
searches at random (a test's own max_examples still holds where it sets one) for new
counterexamples; one it finds is pinned with `@example` and its bound or its cause fixed.
"""

import os

from hypothesis import settings

pytest_plugins = ["tests.support.fixtures"]

settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", max_examples=1000, derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
