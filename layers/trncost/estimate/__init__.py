"""The pure estimate engine (no I/O, no clock, no boto3)."""

from trncost.estimate.compare import best_comparable, comparability
from trncost.estimate.engine import break_even_price, estimate, total_formula
from trncost.estimate.errors import DomainError, MissingEvidence

__all__ = [
    "DomainError",
    "MissingEvidence",
    "best_comparable",
    "break_even_price",
    "comparability",
    "estimate",
    "total_formula",
]
