"""The parts of docs/deploy.md and docs/security.md that are generated from the synthesized
templates (the dev stage), so they cannot drift: each stack's outputs, and every role and
persona policy with its actions. Each sits between markers in its page:

    <!-- generated: outputs -->  …  <!-- /generated: outputs -->     (docs/deploy.md)
    <!-- generated: roles -->    …  <!-- /generated: roles -->       (docs/security.md)

`tests/infra/test_docs_current.py` fails when a page differs from what the templates say;
`.venv/bin/python -m tests.support.docs_kit` synthesizes the app and rewrites both parts.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "docs" / "deploy.md"
SECURITY = ROOT / "docs" / "security.md"
STAGE = "dev"
# CDK's own cross-stack exports (Fn::ImportValue plumbing), not outputs for a person.
INTERNAL_OUTPUT = re.compile(r"^ExportsOutput")


def block(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- generated: {name} -->\n)(.*?)(<!-- /generated: {name} -->)", re.DOTALL
    )


def stacks(templates: dict[str, dict[str, Any]]) -> list[str]:
    """The dev stage's stacks, as deployed: `TrncostData`, … (in synth order)."""
    return [path.split("/", 1)[1] for path in templates if path.startswith(f"{STAGE}/")]


def outputs(template: dict[str, Any]) -> list[str]:
    return sorted(k for k in template.get("Outputs", {}) if not INTERNAL_OUTPUT.match(k))


def outputs_table(templates: dict[str, dict[str, Any]]) -> str:
    rows = ["| stack (`<stage>-…`) | outputs |", "|---|---|"]
    for stack in stacks(templates):
        names = outputs(templates[f"{STAGE}/{stack}"])
        rows.append(f"| `{stack}` | " + ", ".join(f"`{n}`" for n in names) + " |")
    return "\n".join(rows) + "\n"


def _actions(document: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for statement in document.get("Statement", []):
        action = statement.get("Action", [])
        found |= {action} if isinstance(action, str) else set(action)
    return found


def _path(resource: dict[str, Any]) -> str:
    path = str(resource.get("Metadata", {}).get("aws:cdk:path", ""))
    path = path.removeprefix(f"{STAGE}/")
    for tail in ("/DefaultPolicy/Resource", "/Resource"):
        path = path.removesuffix(tail)
    return path.removesuffix("/Role") if path.endswith("/Role") else path


def _by_service(actions: set[str]) -> str:
    grouped: dict[str, list[str]] = defaultdict(list)
    for action in sorted(actions):
        service, _, name = action.partition(":")
        grouped[service].append(name)
    return "; ".join(f"`{s}`: " + ", ".join(names) for s, names in sorted(grouped.items()))


def _managed(arn: Any) -> str:
    """An AWS managed policy's name from its ARN (a Fn::Join of the partition and the path)."""
    if isinstance(arn, dict) and "Fn::Join" in arn:
        arn = "".join(p for p in arn["Fn::Join"][1] if isinstance(p, str))
    return str(arn).rsplit("/", 1)[-1]


def roles(templates: dict[str, dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(role or policy, who uses it, its actions) for every IAM role and managed policy."""
    rows: dict[str, tuple[str, set[str], list[str]]] = {}
    policies: dict[str, set[str]] = defaultdict(set)
    for stack in stacks(templates):
        resources = templates[f"{STAGE}/{stack}"]["Resources"]
        for resource in resources.values():
            kind, props = resource["Type"], resource.get("Properties", {})
            if kind == "AWS::IAM::Role":
                principals = sorted(
                    str(p.get("Service", p))
                    for st in props["AssumeRolePolicyDocument"]["Statement"]
                    for p in [st["Principal"]]
                )
                inline: set[str] = set()
                for policy in props.get("Policies", []):
                    inline |= _actions(policy["PolicyDocument"])
                managed = [_managed(a) for a in props.get("ManagedPolicyArns", [])]
                rows[_path(resource)] = (", ".join(principals), inline, managed)
            elif kind == "AWS::IAM::Policy":
                policies[_path(resource)] |= _actions(props["PolicyDocument"])
            elif kind == "AWS::IAM::ManagedPolicy":
                rows[_path(resource)] = ("persona policy", _actions(props["PolicyDocument"]), [])
    out = []
    for path, (who, actions, managed) in rows.items():
        actions = actions | policies.get(path, set())
        text = _by_service(actions) if actions else ""
        if managed:
            text = "; ".join([t for t in (text, "AWS managed: " + ", ".join(managed)) if t])
        out.append((path, who, text))
    return out


def roles_table(templates: dict[str, dict[str, Any]]) -> str:
    rows = ["| role or policy (stack/construct) | assumed by | actions |", "|---|---|---|"]
    rows += [f"| `{path}` | {who} | {actions} |" for path, who, actions in roles(templates)]
    return "\n".join(rows) + "\n"


def rewrite(page: Path, name: str, table: str) -> bool:
    """Put `table` between the page's markers; True when the page changed."""
    text = page.read_text(encoding="utf-8")
    pattern = block(name)
    if not pattern.search(text):
        raise ValueError(f"{page.name}: no <!-- generated: {name} --> block")
    new = pattern.sub(lambda m: m.group(1) + table + m.group(3), text)
    page.write_text(new, encoding="utf-8")
    return new != text


def generated(page: Path, name: str) -> str:
    match = block(name).search(page.read_text(encoding="utf-8"))
    if match is None:
        raise ValueError(f"{page.name}: no <!-- generated: {name} --> block")
    return match.group(2)


def main() -> None:
    import tempfile

    from tests.support.cdk import synthesize_real_app

    with tempfile.TemporaryDirectory() as out:
        result = synthesize_real_app(Path(out))
        result.require()
        templates = result.templates
    for page, name, table in (
        (DEPLOY, "outputs", outputs_table(templates)),
        (SECURITY, "roles", roles_table(templates)),
    ):
        changed = rewrite(page, name, table)
        print(f"{page.relative_to(ROOT)} ({name}): {'rewritten' if changed else 'current'}")


if __name__ == "__main__":
    main()
