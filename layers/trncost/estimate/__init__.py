"""The pure estimate engine (no I/O, no clock, no boto3)."""

from trncost.estimate.engine import break_even_price, estimate, total_formula
from trncost.estimate.errors import DomainError, MissingEvidence

__all__ = ["DomainError", "MissingEvidence", "break_even_price", "estimate", "total_formula"]
