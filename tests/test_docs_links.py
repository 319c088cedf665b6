"""The README and docs/ point at things that exist: every relative link (and
its ``#anchor``, GitHub's heading slugs), and every repository file or module
they name in backticks. A reader follows them to find the reasons; a link
left dead by a rename or a removal sends them nowhere.

A path is the repository's, or the installed package's (``pyproject.toml``'s
``package-dir``: ``boardgen_dagster/`` is ``assets/``,
``boardgen_pipeline/default_tables/`` is ``tables/``). A decision record may
name what a later change removed when it says so right after the name:
```` `assets/storage.py` (removed) ```` (or ``(gone``): the reader is told."""

from __future__ import annotations

import ast
import re
import unicodedata
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

from .conftest import REPO

DOCS = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])

FENCE = re.compile(r"^ {0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
# a repository path in backticks: a top folder of the repository, then a file (or folder) name
PATH = re.compile(r"^(boardgen_pipeline|boardgen_dagster|assets|tests|benchmarks|scripts|docs)/[\w./-]*$")
MODULE = re.compile(r"^(boardgen_pipeline|boardgen_dagster)(\.\w+)+$")
PACKAGE_DIRS = {"boardgen_pipeline": REPO / "boardgen_pipeline", "boardgen_dagster": REPO / "assets"}
# the installed package's paths that the repository keeps elsewhere (pyproject.toml [tool.setuptools.package-dir])
INSTALLED = {"boardgen_dagster/": "assets/", "boardgen_pipeline/default_tables": "tables"}
REMOVED = re.compile(r"^\s*\((removed|gone)\b")


def prose(path: Path) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    out, fenced = [], False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text as rendered (code, links and
    emphasis reduced to their words), lower-cased, punctuation dropped but for
    ``-`` and ``_``, spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), text)
    text = re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", text)  # emphasis markers, not the underscores inside words
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose(path):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def links(path: Path) -> list[tuple[int, str]]:
    out = []
    for n, line in prose(path):
        without_code = CODE_SPAN.sub("", line)
        out += [(n, m.group(1)) for m in INLINE_LINK.finditer(without_code)]
        m = REFERENCE.match(line)
        if m:
            out.append((n, m.group(1)))
    return out


def link_problem(doc: Path, target: str) -> str | None:
    """Why a link of ``doc`` leads nowhere, or None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
        return None  # http:, https:, mailto: ...: outside the repository
    where, _, anchor = target.partition("#")
    dest = (doc.parent / unquote(where)).resolve() if where else doc
    if not dest.exists():
        return f"{where} does not exist"
    if not dest.is_relative_to(REPO):
        return f"{where} is outside the repository"
    if anchor and dest.suffix == ".md" and unquote(anchor) not in anchors(dest):
        return f"{dest.relative_to(REPO)} has no heading whose anchor is #{anchor}"
    return None


def named_paths(path: Path) -> list[tuple[int, str]]:
    out = []
    for n, line in prose(path):
        for m in CODE_SPAN.finditer(line):
            text = m.group(2).strip()
            if "*" in text or "<" in text or "..." in text:
                continue  # a pattern or a placeholder, not a file
            if REMOVED.match(line[m.end():]):
                continue  # history, said to be history
            if PATH.match(text) or MODULE.match(text):
                out.append((n, text))
    return out


@cache
def _top_names(module_file: Path) -> frozenset[str]:
    tree = ast.parse(module_file.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def module_problem(dotted: str) -> str | None:
    """``package.module`` or ``package.module.name``: the module exists, and
    the name after it is defined at its top level."""
    parts = dotted.split(".")
    folder = PACKAGE_DIRS[parts[0]]
    module_file = folder / "__init__.py"
    i = 1
    while i < len(parts):
        if (folder / parts[i] / "__init__.py").is_file():
            folder = folder / parts[i]
            module_file = folder / "__init__.py"
        elif (folder / f"{parts[i]}.py").is_file():
            module_file = folder / f"{parts[i]}.py"
            i += 1
            break
        else:
            break
        i += 1
    rest = parts[i:]
    if not rest:
        return None
    if rest[0] not in _top_names(module_file):
        return f"{'.'.join(parts[:i])} ({module_file.relative_to(REPO)}) defines no {rest[0]!r}"
    return None


def path_problem(text: str) -> str | None:
    in_repo = text
    for installed, repo_path in INSTALLED.items():
        if text.startswith(installed):
            in_repo = repo_path + text[len(installed):]
    return None if (REPO / in_repo.rstrip("/")).exists() else f"{text} does not exist"


def _problems(doc: Path) -> list[str]:
    rel = doc.relative_to(REPO)
    out = [f"{rel}:{n}: link ({target}): {why}" for n, target in links(doc) if (why := link_problem(doc, target))]
    for n, text in named_paths(doc):
        why = module_problem(text) if MODULE.match(text) else path_problem(text)
        if why:
            out.append(f"{rel}:{n}: `{text}`: {why}")
    return out


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(REPO)) for d in DOCS])
def test_every_link_and_every_named_file_exists(doc):
    assert _problems(doc) == []


def test_the_checker_finds_what_it_looks_for(tmp_path):
    """The checker on a page with one of each fault, and one of each sound
    reference: it must name exactly the faults."""
    docs = REPO / "docs"
    page = docs / "decisions" / "packaging.md"  # an existing page: links resolve from its folder
    text = "\n".join([
        "# A page", "## Exit codes", "### `boardgen calibrate --warehouse`, read first",
        "[ok](../testing.md#the-suites-rules) [ok](#exit-codes) [ok](#boardgen-calibrate---warehouse-read-first)",
        "[dead](../nowhere.md) [dead anchor](../testing.md#no-such-heading) [web](https://example.org/x)",
        "`boardgen_pipeline/exits.py` `tests/no_such_test.py` `boardgen_pipeline.exits.markdown_table`",
        "`boardgen_pipeline.exits.no_such_name` `boardgen_dagster.retention` `docs/decisions/*.md`",
        "`boardgen_dagster/ui.py` `boardgen_pipeline/default_tables/board_gen.toml` `assets/gone.py` (removed)",
        "`boardgen_dagster/gone.py` `assets/gone.py`",
        "```", "[inside a fence](../nowhere-either.md) `tests/not_checked_in_a_fence.py`", "```",
    ])
    fake = tmp_path / "page.md"
    fake.write_text(text, encoding="utf-8")
    found = []
    for n, target in links(fake):
        why = link_problem(page, target) if not target.startswith("#") else (
            None if target[1:] in anchors(fake) else f"no anchor {target}")
        if why:
            found.append(target)
    for n, name in named_paths(fake):
        if (module_problem(name) if MODULE.match(name) else path_problem(name)):
            found.append(name)
    assert found == ["../nowhere.md", "../testing.md#no-such-heading", "tests/no_such_test.py",
                     "boardgen_pipeline.exits.no_such_name", "boardgen_dagster/gone.py", "assets/gone.py"]
    assert slug("Scale-out: every core, a Dask cluster, Kubernetes") == "scale-out-every-core-a-dask-cluster-kubernetes"
    assert slug("Scale (600 rows, 2 cores)") == "scale-600-rows-2-cores"
