"""Every Markdown link in README.md, docs/*.md and CHANGELOG.md stays inside the repository and
resolves: a relative link names a file or folder that exists (never above the repository root,
never an absolute path), and an anchor names a heading of the page it points to. External
links are allowed only over https (the AWS documentation, say)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").glob("*.md")],
    key=lambda p: str(p),
)

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
# [text](target "title") and ![alt](target); the target may be wrapped in <…>
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]"  # [text], one level of nested brackets
    r"\(\s*(<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\s*\)"  # (target "title")
)
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.MULTILINE)
AUTOLINK = re.compile(r"<((?:https?|ftp|file)://[^>\s]+)>")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The page without fenced code blocks and code spans (links there are not links)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def links(text: str) -> list[str]:
    prose = _prose(text)
    found = [m.group(1) for m in INLINE_LINK.finditer(prose)]
    found += [m.group(1) for m in REFERENCE_DEF.finditer(prose)]
    found += [m.group(1) for m in AUTOLINK.finditer(prose)]
    return [t[1:-1] if t.startswith("<") and t.endswith(">") else t for t in found]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor a page has (a repeated heading gets -1, -2, … as on GitHub)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for match in HEADING.finditer(FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(match.group(2))
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


def problem(page: Path, target: str) -> str | None:
    """Why `target`, linked from `page`, is not allowed; None when it is fine."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        if parts.scheme == "https" and parts.netloc:
            return None
        return f"{target}: only https links may leave the repository"
    path, fragment = unquote(parts.path), unquote(parts.fragment)
    if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path) or path.startswith("~"):
        return f"{target}: an absolute path (link relative to the page)"
    resolved = (page.parent / path).resolve() if path else page
    if resolved != ROOT and ROOT not in resolved.parents:
        return f"{target}: leaves the repository"
    if not resolved.exists():
        return f"{target}: {resolved.relative_to(ROOT)} does not exist"
    if fragment:
        if resolved.is_dir() or resolved.suffix.lower() != ".md":
            return f"{target}: an anchor into something that is not a Markdown page"
        if fragment not in anchors(resolved):
            return f"{target}: no heading #{fragment} in {resolved.relative_to(ROOT)}"
    return None


def test_the_pages_exist() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "CHANGELOG.md", "docs/README.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_stays_in_the_repository_and_resolves(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    problems = [p for t in links(text) if (p := problem(page, t)) is not None]
    assert not problems, f"{page.relative_to(ROOT)}:\n  " + "\n  ".join(problems)


def test_every_docs_page_is_in_the_index() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    listed = {Path(urlsplit(t).path).name for t in links(index)}
    missing = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md")
    assert [name for name in missing if name not in listed] == []


# -- the checker itself ---------------------------------------------------------------------
def test_the_checker_refuses_links_that_leave_or_do_not_resolve(tmp_path: Path) -> None:
    readme = ROOT / "README.md"
    assert problem(readme, "../shared/DESIGN.md") is not None  # above the root
    assert problem(readme, "/work/shared/DESIGN.md") is not None  # absolute
    assert problem(readme, "file:///etc/passwd") is not None
    assert problem(readme, "http://example.com/") is not None  # not https
    assert problem(readme, "docs/no-such-page.md") is not None
    assert problem(readme, "docs/api.md#no-such-heading") is not None
    assert problem(readme, "#no-such-heading") is not None
    assert problem(readme, "docs/api.md") is None
    assert problem(readme, "https://docs.aws.amazon.com/pricing/") is None
    assert links("see [a](x.md) and `[b](y.md)`\n```\n[c](z.md)\n```\n") == ["x.md"]


def test_slugs_follow_github() -> None:
    assert slug("The local runtime (`make run`)") == "the-local-runtime-make-run"
    assert slug("`trncost trial run --local`") == "trncost-trial-run---local"
    assert slug("The stage config (`cdk.json` → `context.stages.<stage>`)") == (
        "the-stage-config-cdkjson--contextstagesstage"
    )
    assert slug("Join a job to a workload: the `trncost:*` tags") == (
        "join-a-job-to-a-workload-the-trncost-tags"
    )
