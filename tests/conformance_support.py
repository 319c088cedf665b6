"""Helpers of the conformance tests: the committed kit, rows rebuilt from a
vector's inputs, the kit's own expected outputs as a result file."""

from __future__ import annotations

import json
from pathlib import Path

from boardgen_pipeline.conformance import kit
from boardgen_pipeline.tables.board_gen import BoardGenRow

REPO = Path(__file__).resolve().parent.parent
KIT = REPO / "conformance" / "kit"
FLOAT_FIELDS = {"mine_density", "inferability_target", "fog_target_ratio", "min_mean_survival"}


def committed() -> kit.Kit:
    return kit.load(KIT)


def row_of(inputs: dict) -> BoardGenRow:
    """The row a ``generate`` vector names, from its inputs alone."""
    fields = {k: (float(v) if k in FLOAT_FIELDS and v is not None else v) for k, v in inputs["row"].items()}
    reserved = {k: fields.pop(k) for k in list(fields) if k.startswith(("elite_", "boss_"))}
    return BoardGenRow(**fields, reserved=reserved)


def generate_vectors(k: kit.Kit) -> list[dict]:
    return [v for _, _, v in k.vectors() if v["kind"] == "generate"]


def write_results(path: Path, results: dict, k: kit.Kit) -> Path:
    payload = {"format": kit.RESULTS_FORMAT, "kit_version": k.version, "kit_digest": k.digest, "results": results}
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def expected(k: kit.Kit) -> dict:
    """Every vector's expected outputs (a deep copy: tests edit them)."""
    return json.loads(json.dumps(kit.expected_results(k)["results"]))
