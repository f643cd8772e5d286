"""Price List tiers over numpy arrays: the tiered charge of many quantities at once (the
float twin of money.tiered_amount, for the range and the tornado)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
Quantity = Array | float  # one value per draw, or one for all draws (broadcast)


@dataclass(frozen=True)
class Tiers:
    """Contiguous tiers [begin, end) from 0, as money.tiered_amount charges them: `begin`
    and `end` in the price's unit, `rate` in USD per unit."""

    begin: Array
    end: Array
    rate: Array
    # the amount charged up to each tier's begin: a piecewise-linear, increasing function
    _cum: Array = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        widths = np.minimum(self.end, np.r_[self.begin[1:], np.inf]) - self.begin
        cum = np.r_[0.0, np.cumsum((widths * self.rate)[:-1])]
        object.__setattr__(self, "_cum", cum)

    def amount(self, q: Quantity) -> Quantity:
        """The charge of quantity `q` [unit of the price] (per draw, or one for all draws)
        through the tiers, as money.tiered_amount computes it, in floats [USD]."""
        if self.begin.size == 1 and self.end[0] == np.inf:
            return np.asarray(q, dtype=np.float64) * float(self.rate[0])
        # piecewise linear through (beginᵢ, charged up to it), then the last tier's rate past
        # its begin: np.interp is one pass (searchsorted and three gathers were five)
        out: Array = np.asarray(np.interp(q, self.begin, self._cum), dtype=np.float64)
        over = np.asarray(q, dtype=np.float64) - self.begin[-1]
        if over.ndim == 0:
            return float(out) + max(float(over), 0.0) * float(self.rate[-1])
        np.maximum(over, 0.0, out=over)
        over *= self.rate[-1]
        out += over
        return out
