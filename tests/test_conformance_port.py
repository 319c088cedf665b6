"""docs/conformance.md is complete enough for a port: the clean-room port
``tests/conformance_port.py``, written from the document alone in signed
64-bit arithmetic, agrees with the kit on every vector it covers (streams,
the attempt loop of rows without fog, the measure, the least-bad sequence),
and ``boardgen conformance check`` finds no divergence in its results."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

from boardgen_pipeline import cli
from boardgen_pipeline.conformance import check, kit

from . import conformance_port as port
from .conformance_support import KIT, committed

COVERED = {"derive_at", "below", "open_stream", "generate", "measure", "measure_cells", "least_bad_sequence"}


def test_the_port_written_from_the_document_agrees_with_the_kit(tmp_path):
    k = committed()
    files = {name: json.loads((KIT / name).read_text()) for name in kit.FILES}
    results = port.results(files, k.manifest)
    path = tmp_path / "port.json"
    path.write_text(json.dumps(results))
    verdict = check.check(k, results["results"])
    assert verdict.divergences == []
    by_id = {v["id"]: v for _, _, v in k.vectors()}
    # what it leaves out is what its docstring says it leaves out: fog rows, overlays, skew, node maps, tables
    uncovered = {m for m in verdict.missing if by_id[m]["kind"] not in COVERED or "fog" in by_id[m]["flags"]}
    assert set(verdict.missing) == uncovered
    assert sum(1 for v in by_id.values() if v["kind"] == "generate" and v["id"] in results["results"]) >= 45
    assert {by_id[i]["kind"] for i in results["results"]} == COVERED
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["conformance", "check", str(KIT), str(path)])
    assert code == 3  # the vectors it does not cover have no result
    assert "DIVERGES" not in out.getvalue()
    assert out.getvalue().splitlines()[-1] == (f"{len(results['results'])} of {len(by_id)} vectors agree; 0 diverge, "
                                               f"{len(verdict.missing)} have no result")


def test_the_ports_signed_arithmetic_is_the_documents():
    """The recipes of docs/conformance.md "GDScript traps", held to plain
    unsigned arithmetic on the values where they are easiest to get wrong."""
    values = [0, 1, 2**62, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1, 0xBF58476D1CE4E5B9]
    for u in values:
        s = port.i64(u)
        for n in (1, 3, 2**62 + 1, 3 * 2**61, 2**63 - 1):
            assert port.umod(s, n) == u % n, (u, n)
        for shift in (1, 27, 30, 31, 63):
            assert port.unsigned(port.lsr(s, shift)) == u >> shift
        for v in values:
            assert port.ult(s, port.i64(v)) == (u < v)
