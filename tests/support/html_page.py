"""Reading a rendered report page in tests: a parser that checks tags balance and keeps the
tags and text, one `<section>` by id, and what "self-contained" means for a page."""

from __future__ import annotations

import re
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}  # fmt: skip
SVG_LEAVES = {"rect", "line", "path", "circle", "stop"}
RESOURCE_ATTRS = {"src", "href", "xlink:href", "srcset", "action", "poster", "data", "background"}


class Page(HTMLParser):
    """Parses a page: checks that tags balance and keeps what the tests look at."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[str] = []
        self.doctype: str | None = None
        self.feed(text)
        self.close()
        if self.stack:
            self.errors.append(f"unclosed: {self.stack}")

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID and tag not in SVG_LEAVES:
            self.errors.append(f"self-closed <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            self.errors.append(f"end tag for void <{tag}>")
        elif not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    @property
    def text(self) -> str:
        return re.sub(r"\s+", " ", "".join(self.texts))

    def find(self, tag: str | None = None, **attrs: str) -> list[dict[str, str | None]]:
        return [
            a
            for t, a in self.tags
            if (tag is None or t == tag)
            and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]


def section(html: str, section_id: str) -> str:
    match = re.search(rf'<section id="{section_id}".*?</section>', html, re.S)
    assert match, section_id
    return match.group(0)


def assert_self_contained(html: str) -> None:
    """The page fetches nothing: no script, stylesheet, image or frame tags, no event handler
    attributes, every resource attribute and CSS url() a fragment (#id) of the page itself, no
    absolute URL anywhere in an attribute, no @import or @font-face."""
    page = Page(html)
    for tag, attrs in page.tags:
        assert tag not in {"script", "link", "img", "iframe", "object", "embed", "base"}, tag
        for name, value in attrs.items():
            if name in RESOURCE_ATTRS:
                assert value and value.startswith("#"), (tag, name, value)
            assert not name.startswith("on"), (tag, name)
            assert "http://" not in (value or "") and "https://" not in (value or ""), (tag, name)
    assert not re.search(r'(src|href)\s*=\s*["\']?\s*(https?:)?//', html)
    for url in re.findall(r"url\(([^)]*)\)", html):
        assert url.strip("'\" ").startswith("#"), url
    assert "@import" not in html and "@font-face" not in html
