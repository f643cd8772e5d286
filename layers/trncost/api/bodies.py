"""The API bodies every route shares and the app itself answers with (errors, health), and the
base of every schema. No domain model here: the app and its error mapping import this alone,
so a cold start loads a route module's models only when a request needs them (api/app.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Schema(BaseModel):
    """The base of every API body: its validator is built on first use, not at import."""

    model_config = ConfigDict(defer_build=True)


class Health(Schema):
    status: str
    version: str


class ErrorBody(Schema):
    error: str = Field(description="a stable code: not_found, conflict, validation_error, ...")
    message: str
    fields: list[str] = Field(default_factory=list, description="the fields at fault, dotted")
