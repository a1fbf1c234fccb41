"""The README is one page and the reference is in docs/: every relative link in them leads to a file
that exists, and every `#anchor` to a heading of that file (GitHub's slugs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _slug(title: str) -> str:
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _headings(page: Path) -> set[str]:
    tokens = MarkdownIt().parse(page.read_text())
    return {_slug(tokens[i + 1].content) for i, token in enumerate(tokens) if token.type == "heading_open"}


def _links(page: Path) -> list[str]:
    found = []
    for token in MarkdownIt().parse(page.read_text()):
        for child in token.children or ():
            if child.type == "link_open":
                found.append(child.attrGet("href"))
            elif child.type == "image":
                found.append(child.attrGet("src"))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_leads_somewhere(page):
    for href in _links(page):
        if re.match(r"\w+:", href):
            continue
        target, _, anchor = href.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page.name}: {href} names no file"
        if anchor and path.suffix == ".md":
            assert anchor in _headings(path), f"{page.name}: {href} names no heading of {path.name}"


def test_the_readme_is_one_page():
    assert len((REPO / "README.md").read_text().splitlines()) <= 150
