"""What changed between two versions of an estimate: one entry per figure that moved."""

from __future__ import annotations

from pydantic import Field

from trncost.model.common import DomainModel


class FigureChange(DomainModel):
    """One figure of an estimate that differs from the version before, as people read it
    (money to the cent, quantities to 4 significant digits)."""

    figure: str = Field(
        description="a stable key: status, total_usd, time.total_h, component:instances, "
        "line:<component>:<name>, pending:<price key>, warning:<code>, ..."
    )
    label: str = Field(description="what the figure is, for people")
    before: str | None = Field(description="the previous version's value; null: it had none")
    after: str | None = Field(description="this version's value; null: it has none")
