"""Loading the template pools from TOML (SPEC 4 "Pools"; seed 004 "模板池挂在
关卡表逐关行上", "池内全部模板加载期预校验（违规致命，fail-fast 不变）").

One file per level: ``<tables>/nodemaps/level_<L>.toml`` holds ``level = L``,
the level's templates in draw order (``[[templates]]``) and the optional
step-3 parameters (``[procedural]``). Loading checks field names and value
kinds, then runs every rule of :mod:`.validate` on every template of every
pool, and raises one :class:`~boardgen_pipeline.errors.TableError` listing
all violations of all files. A template whose fields cannot be read is left
out of the graph rules (they would only echo the same mistake) but still
counts for the pool rules.
"""

from __future__ import annotations

import re
from pathlib import Path

from boardgen_pipeline.errors import TableError, Violation
from boardgen_pipeline.nodemap.model import SLOT_TYPES, Node, Pool, ProceduralParams, Template
from boardgen_pipeline.nodemap.validate import check_content_discipline, pool_rules, validate_template
from boardgen_pipeline.tables.tomlio import load_toml

FILE_KEYS = {"level", "templates", "procedural"}
TEMPLATE_KEYS = {"id", "name", "fixed", "nodes", "edges"}
NODE_KEYS = {"id", "type", "tutorial", "slot"}
PROCEDURAL_KEYS = {"enabled", "layers", "branching", "type_mix", "retry_budget", "min_routes"}

LEVEL_FILE = re.compile(r"^level_(\d+)\.toml$")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Reader:
    """Collects violations of one file while reading it."""

    def __init__(self, file: str):
        self.file = file
        self.violations: list[Violation] = []

    def bad(self, row, field, value, rule, message) -> None:
        self.violations.append(Violation(self.file, str(row), field, value, rule, message))

    def unknown_keys(self, row, table: dict, allowed: set[str], what: str) -> None:
        for key in sorted(set(table) - allowed):
            self.bad(row, key, table[key], "unknown_field",
                     f"{what}: unknown field {key!r} (allowed: {', '.join(sorted(allowed))})")


def load_pool_file(path: Path | str) -> tuple[Pool | None, list[Violation]]:
    """Read and validate one level file: ``(pool, violations)``. The pool is
    None when the file cannot be read as a pool at all."""
    path = Path(path)
    try:
        data = load_toml(path)
    except TableError as exc:
        return None, list(exc.violations)
    r = _Reader(str(path))
    r.unknown_keys("-", data, FILE_KEYS, "file")

    level = data.get("level")
    if level is None:
        r.bad("-", "level", None, "missing_field", "the file must say which level it is (level = L)")
    elif not _is_int(level) or level < 1:
        r.bad("-", "level", level, "bad_value", "level is an integer >= 1")
        level = None
    m = LEVEL_FILE.match(path.name)
    if level is not None and m and int(m.group(1)) != level:
        r.bad("-", "level", level, "level_mismatch", f"file {path.name} holds level = {level}")

    procedural = _read_procedural(r, data.get("procedural", {}), level)

    raw = data.get("templates")
    if raw is None:
        raw = []
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        r.bad("-", "templates", raw, "bad_value", "templates is an array of tables ([[templates]])")
        raw = []

    members: list[tuple[str, bool]] = []
    templates: list[Template] = []
    for i, entry in enumerate(raw):
        t = _read_template(r, entry, i, level or 0)
        tid = entry.get("id")
        members.append((tid if isinstance(tid, str) else f"#{i + 1}", entry.get("fixed") is True))
        if t is not None:
            templates.append(t)
    if level is None:
        return None, r.violations

    violations = r.violations + pool_rules(str(path), level, members)
    for t in templates:
        violations.extend(validate_template(t))
    return Pool(level, tuple(templates), str(path), procedural), violations


def _read_template(r: _Reader, entry: dict, index: int, level: int) -> Template | None:
    before = len(r.violations)
    tid = entry.get("id")
    if not isinstance(tid, str) or not tid:
        r.bad(f"#{index + 1}", "id", tid, "missing_field" if tid is None else "bad_value",
              f"template #{index + 1} needs a non-empty string id")
        tid = f"#{index + 1}"
    where = f"template {tid!r}"
    r.unknown_keys(tid, entry, TEMPLATE_KEYS, where)
    fixed = entry.get("fixed", False)
    if not isinstance(fixed, bool):
        r.bad(tid, "fixed", fixed, "bad_value", f"{where}: fixed is true or false")
    name = entry.get("name", "")
    if not isinstance(name, str):
        r.bad(tid, "name", name, "bad_value", f"{where}: name is a string")

    nodes: list[Node] = []
    raw_nodes = entry.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes or not all(isinstance(n, dict) for n in raw_nodes):
        r.bad(tid, "nodes", raw_nodes, "missing_field" if raw_nodes is None else "bad_value",
              f"{where}: nodes is a non-empty array of inline tables {{ id = 1, type = \"battle\" }}")
        raw_nodes = []
    for k, n in enumerate(raw_nodes):
        node = _read_node(r, n, tid, k)
        if node is not None:
            nodes.append(node)

    edges: list[tuple[int, int]] = []
    raw_edges = entry.get("edges")
    if not isinstance(raw_edges, list):
        r.bad(tid, "edges", raw_edges, "missing_field" if raw_edges is None else "bad_value",
              f"{where}: edges is an array of [parent, child] pairs")
        raw_edges = []
    for e in raw_edges:
        if isinstance(e, list) and len(e) == 2 and all(_is_int(x) for x in e):
            edges.append((e[0], e[1]))
        else:
            r.bad(tid, "edges", e, "bad_value", f"{where}: edge {e!r} is not a [parent id, child id] pair of integers")
    if len(r.violations) > before:
        return None
    return Template(tid, level, tuple(nodes), tuple(edges), fixed, name, r.file)


def _read_node(r: _Reader, n: dict, tid: str, k: int) -> Node | None:
    before = len(r.violations)
    nid = n.get("id")
    if nid is None:
        r.bad(f"{tid}/#{k + 1}", "id", None, "missing_field",
              f"template {tid!r} node #{k + 1} (in file order) has no id; ids are integers (the node number)")
        nid = f"#{k + 1}"
    elif not _is_int(nid):
        r.bad(f"{tid}/{nid}", "id", nid, "bad_value",
              f"template {tid!r} node {nid!r}: id {nid!r} is not an integer; ids are node numbers")
    row = f"{tid}/{nid}"
    where = f"template {tid!r} node {nid}"
    r.unknown_keys(row, n, NODE_KEYS, where)
    ty = n.get("type")
    if ty is None:
        r.bad(row, "type", None, "missing_field", f"{where}: no type (one of battle, reward, rest, shop, boss)")
    elif not isinstance(ty, str):
        r.bad(row, "type", ty, "bad_value", f"{where}: type is a string")
    tutorial = n.get("tutorial", False)
    if not isinstance(tutorial, bool):
        r.bad(row, "tutorial", tutorial, "bad_value", f"{where}: tutorial is true or false")
    slot = n.get("slot", [])
    if not isinstance(slot, list) or not all(isinstance(c, str) for c in slot):
        r.bad(row, "slot", slot, "bad_value", f"{where}: slot is an array of type names, e.g. {list(SLOT_TYPES[1:])}")
    elif "slot" in n and not slot:
        r.bad(row, "slot", slot, "slot_candidates", f"{where}: an empty slot has nothing to roll; drop the field")
    if len(r.violations) > before:
        return None
    return Node(nid, ty, tutorial, tuple(slot))


def _read_procedural(r: _Reader, p, level) -> ProceduralParams:
    row = f"level {level}/procedural"
    if not isinstance(p, dict):
        r.bad(row, "procedural", p, "bad_value", "[procedural] is a table")
        return ProceduralParams()
    r.unknown_keys(row, p, PROCEDURAL_KEYS, "[procedural]")
    d = ProceduralParams()

    def domain(field, value, message):
        r.bad(row, field, value, "procedural_domain", f"level {level} [procedural] {field}: {message}")

    enabled = p.get("enabled", d.enabled)
    if not isinstance(enabled, bool):
        domain("enabled", enabled, "true or false")
        enabled = False
    layers = p.get("layers", d.layers)
    if not _is_int(layers) or not 3 <= layers <= 12:
        domain("layers", layers, "an integer in [3, 12] (entry, middle layers, shop, boss)")
        layers = d.layers
    branching = p.get("branching", d.branching)
    if not isinstance(branching, (int, float)) or isinstance(branching, bool) or not 0 <= branching <= 1:
        domain("branching", branching, "a number in [0, 1] (share of nodes with out-degree 2)")
        branching = d.branching
    budget = p.get("retry_budget", d.retry_budget)
    if not _is_int(budget) or not 1 <= budget <= 32:
        domain("retry_budget", budget, "an integer in [1, 32] (the max_gen_attempts discipline)")
        budget = d.retry_budget
    min_routes = p.get("min_routes", d.min_routes)
    if not _is_int(min_routes) or not 1 <= min_routes <= 64:
        domain("min_routes", min_routes, "an integer in [1, 64]")
        min_routes = d.min_routes
    mix = p.get("type_mix", dict(d.type_mix))
    type_mix = d.type_mix
    if not isinstance(mix, dict):
        domain("type_mix", mix, "a table of integer weights, e.g. { battle = 6, reward = 2, rest = 2 }")
    else:
        ok = True
        for ty, w in mix.items():
            if ty not in SLOT_TYPES:
                domain("type_mix", ty, f"type {ty!r} cannot be mixed in (allowed: {', '.join(SLOT_TYPES)}; "
                                       "the shop and the boss are placed by structure)")
                ok = False
            elif not _is_int(w) or w < 0:
                domain("type_mix", w, f"weight of {ty!r} is an integer >= 0")
                ok = False
        if ok and sum(mix.values()) < 1:
            domain("type_mix", mix, "at least one weight is positive")
            ok = False
        if ok:
            type_mix = tuple((ty, mix[ty]) for ty in SLOT_TYPES if ty in mix)
    return ProceduralParams(enabled, layers, float(branching), type_mix, budget, min_routes)


def read_pools(tables_dir: Path | str) -> tuple[dict[int, Pool], list[Violation]]:
    """Every ``level_<L>.toml`` under ``<tables_dir>/nodemaps``: pools by
    level and all violations (levels must run 1..n without a gap: an adventure
    walks them in order)."""
    folder = Path(tables_dir) / "nodemaps"
    violations: list[Violation] = []
    pools: dict[int, Pool] = {}
    files = sorted(folder.glob("level_*.toml")) if folder.is_dir() else []
    if not files:
        return {}, [Violation(str(folder), "-", "-", None, "no_pools", "no level_<L>.toml node-map pool file found")]
    unreadable: set[int] = set()  # levels whose file exists but is no pool: reported already
    for f in files:
        if not LEVEL_FILE.match(f.name):
            violations.append(Violation(str(f), "-", "-", f.name, "file_name", "pool files are named level_<L>.toml"))
            continue
        pool, vs = load_pool_file(f)
        violations.extend(vs)
        if pool is None:
            unreadable.add(int(LEVEL_FILE.match(f.name).group(1)))
        else:
            if pool.level in pools:
                violations.append(Violation(str(f), "-", "level", pool.level, "duplicate_level",
                                            f"level {pool.level} already comes from {pools[pool.level].file}"))
            else:
                pools[pool.level] = pool
    levels = sorted(pools)
    for expected in range(1, (levels[-1] if levels else 0) + 1):
        if expected not in pools and expected not in unreadable:
            violations.append(Violation(str(folder), f"level {expected}", "level", expected, "level_gap",
                                        f"no pool for level {expected}; levels run 1..{levels[-1]} without a gap"))
    return dict(sorted(pools.items())), violations


def load_pools(tables_dir: Path | str, board_gen_keys: set[tuple[int, int]] | None = None) -> dict[int, Pool]:
    """Load and validate every pool (and, given the ``board_gen`` keys, the
    content discipline); raise one TableError listing every violation."""
    pools, violations = read_pools(tables_dir)
    if board_gen_keys is not None:
        violations.extend(check_content_discipline(pools, board_gen_keys))
    if violations:
        raise TableError(violations)
    return pools


def validate_tables(tables_dir: Path | str, board_gen_keys: set[tuple[int, int]] | None = None) -> list[Violation]:
    """The ``boardgen validate`` view: every violation, nothing raised."""
    pools, violations = read_pools(tables_dir)
    if board_gen_keys is not None:
        violations.extend(check_content_discipline(pools, board_gen_keys))
    return violations
