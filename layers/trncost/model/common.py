"""Shared field types and the base model every domain model uses."""

from __future__ import annotations

import unicodedata
from decimal import Decimal
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from trncost.ids import ID_MAX_LENGTH, ID_PATTERN
from trncost.model.bounds import Numeric

# Money is Decimal end to end: never a float, never NaN or infinite.
Money = Annotated[Decimal, Field(allow_inf_nan=False)]

# Physical quantities may be float, but never NaN or infinite.
PositiveFloat = Annotated[float, Numeric, Field(gt=0, allow_inf_nan=False)]
Fraction = Annotated[float, Numeric, Field(ge=0, le=1, allow_inf_nan=False)]

# The one id pattern (trncost.ids says why it is what it is).
Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=ID_MAX_LENGTH, pattern=ID_PATTERN)
]
# Free text, bounded (issue 23: a 500 KB note made a record over DynamoDB's 400 KB item limit).
# A name or a label is one line of plain text; a note may break lines. Neither may hold a
# control character other than a line break or tab (an ESC drives the terminal it is printed
# on), a lone surrogate (not text: it cannot be encoded) or a bidirectional override (it
# reorders what a person reads).
MAX_NAME_CHARS = 256
MAX_NOTE_CHARS = 4000
MAX_TEXT_ITEMS = 200  # notes, labels, ids in one list
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def unprintable(text: str, allow: str = "") -> str | None:
    """The first character of `text` that may not be stored as text, described; None if none."""
    for c in text:
        if c in allow:
            continue
        if unicodedata.category(c) in ("Cc", "Cs") or c in _BIDI_CONTROLS:
            return f"U+{ord(c):04X}"
    return None


def _one_line(text: str) -> str:
    bad = unprintable(text)
    if bad is not None:
        raise ValueError(f"holds a control or unprintable character ({bad})")
    return text


def _note(text: str) -> str:
    bad = unprintable(text, allow="\n\t")
    if bad is not None:
        raise ValueError(f"holds a control or unprintable character ({bad})")
    return text


Name = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_NAME_CHARS, strip_whitespace=True),
    AfterValidator(_one_line),
]
Label = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(_one_line)
]
Note = Annotated[str, StringConstraints(max_length=MAX_NOTE_CHARS), AfterValidator(_note)]
Region = Annotated[str, StringConstraints(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-\d$")]
InstanceType = Annotated[
    str, StringConstraints(pattern=r"^(ml\.)?[a-z][a-z0-9-]*\.[a-z0-9-]+$", max_length=64)
]


class DomainModel(BaseModel):
    """Strict about unknown fields so a typo never silently drops an input."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, str_strip_whitespace=True, defer_build=True
    )
