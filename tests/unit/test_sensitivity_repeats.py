"""Identical repeats: a swing still brackets its point.

Given three target trials that measured the same throughput, whose mean rounds off by an ulp
(a found example of test_sensitivity's property), when the tornado is built, then every
swing's low end is at or below the point and its high end at or above it.
"""

from __future__ import annotations

import pytest

from tests.support.factories import inputs, instance_quote, snapshot, trial
from trncost.estimate import estimate, tornado

PRICES = snapshot(instance_quote("trn2.48xlarge", "36"))


@pytest.mark.parametrize("work", [2.2e8, 3.7e8])  # the mean rounds up, and down
def test_identical_repeats_bracket_the_point(work):
    trials = [
        trial(f"t-{i}", phase="target", count=2, work=work, wall={"steady_s": 3600})
        for i in range(3)
    ]
    inp = inputs(
        trials=trials,
        prices=PRICES,
        assumptions={"idle_fraction": 0.2, "checkpoint_interval_s": 1800, "restart_s": 600},
    )
    swings = tornado(inp, estimate(inp))
    assert swings
    for s in swings:
        assert s.low.value <= s.point <= s.high.value, s.input_id
