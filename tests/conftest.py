"""Shared fixtures: repository paths and small table writers."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = REPO.parent / "shared"
# the C baseline: ../shared's when the clone sits beside it, else the repo's copy
BASELINE_C = next(p for p in (SHARED / "bench" / "baseline.c", REPO / "benchmarks" / "baseline.c") if p.exists())


@pytest.fixture
def repo() -> Path:
    return REPO


def row_toml(**fields) -> str:
    lines = ["[[rows]]"]
    for k, v in fields.items():
        lines.append(f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"')
    return "\n".join(lines) + "\n"


BASE_ROW = dict(
    level_index=1, node_depth=0, board_width=10, board_height=10, mine_density=0.22,
    inferability_target=0.85, solver_rules="single_subset", min_safe_count=40,
    max_gen_attempts=32, board_type="dungeon", shave_ring_radius=1, r0_max_cap=50,
)


def write_table(path: Path, rows: list[dict], header: str = "[header]\nspawn_side = 3\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "\n".join(row_toml(**r) for r in rows), encoding="utf-8")
    return path
