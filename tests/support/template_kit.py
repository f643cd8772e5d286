"""Reading synthesized CloudFormation templates: helpers shared by the infra tests."""

from __future__ import annotations

from typing import Any


def listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def resources(template: dict, resource_type: str) -> dict[str, dict]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == resource_type}


def one(template: dict, resource_type: str) -> tuple[str, dict]:
    found = resources(template, resource_type)
    assert len(found) == 1, f"expected one {resource_type}, found {sorted(found)}"
    return next(iter(found.items()))


def statements(template: dict, role_id: str) -> list[dict]:
    statements = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def by_action(statements: list[dict]) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for statement in statements:
        assert statement["Effect"] == "Allow"
        assert "Condition" not in statement and "NotAction" not in statement
        for action in listed(statement["Action"]):
            found.setdefault(action, []).extend(listed(statement["Resource"]))
    return found


def exported(synthesized, value: Any) -> tuple[str, Any]:
    """(exporting stack, exported expression) of an Fn::ImportValue."""
    assert isinstance(value, dict) and "Fn::ImportValue" in value, value
    name = value["Fn::ImportValue"]
    for stack, template in synthesized.templates.items():
        for output in template.get("Outputs", {}).values():
            if output.get("Export", {}).get("Name") == name:
                return stack, output["Value"]
    raise AssertionError(f"no stack exports {name}")
