"""``boardgen conformance check`` (SPEC 11: "checks a port's results against
them"): the kit's own outputs agree (exit 0); one cell flipped, one draw
changed, one attempt dropped each give exit 3 naming that vector and the
first divergent stage, not a later one; bad input is one sentence, exit 1,
nothing written. ``conformance export`` into a new folder writes the
committed kit's bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boardgen_pipeline.conformance import kit

from .conformance_support import KIT, REPO, committed, expected, run, write_results


@pytest.fixture(scope="module")
def the_kit():
    return committed()


def _check(tmp_path: Path, the_kit, results: dict) -> tuple[int, str, str]:
    return run("conformance", "check", str(KIT), str(write_results(tmp_path / "results.json", results, the_kit)))


def test_the_kits_own_outputs_agree(tmp_path, the_kit):
    code, out, err = _check(tmp_path, the_kit, expected(the_kit))
    assert (code, err) == (0, "")
    total = sum(1 for _ in the_kit.vectors())
    assert out == f"{total} of {total} vectors agree\n"


def _flip(row: str, x: int) -> str:
    return row[:x] + ("1" if row[x] == "*" else "*") + row[x + 1:]


def test_one_cell_flipped_names_the_vector_and_the_numbers(tmp_path, the_kit):
    results = expected(the_kit)
    board = results["generate/L2D1/i1"]["board"]
    board["numbers"][3] = _flip(board["numbers"][3], 5)
    code, out, err = _check(tmp_path, the_kit, results)
    lines = out.splitlines()
    assert code == 3 and err == ""
    assert lines[0].startswith("DIVERGES generate/L2D1/i1 [")
    assert lines[0].split("]: ", 1)[1].startswith("stage numbers: board.numbers[3]: expected ")
    assert lines[0].endswith("(first differing cell (5,3))")
    assert lines[-1].endswith("vectors agree; 1 diverge, 0 have no result")


def test_one_draw_changed_names_the_draw(tmp_path, the_kit):
    results = expected(the_kit)
    draws = results["generate/L1D2/i0"]["attempts"][0]["placement"]["draws"]
    draws[7] += 1
    results["stream/node_map/m42/s7"]["outputs"][2] = "12345"
    code, out, _ = _check(tmp_path, the_kit, results)
    lines = out.splitlines()
    assert code == 3
    assert lines[0] == ('DIVERGES stream/node_map/m42/s7: stage stream draw (SplitMix64): outputs[2]: expected "'
                        + expected(the_kit)["stream/node_map/m42/s7"]["outputs"][2] + '", got "12345"')
    assert "DIVERGES generate/L1D2/i0 [" in lines[1]
    assert lines[1].split("]: ", 1)[1] == (f"stage attempt 1 placement (a stream draw): attempts[0].placement.draws[7]: "
                                           f"expected {draws[7] - 1}, got {draws[7]}")


def test_one_attempt_dropped_names_the_attempt_loop(tmp_path, the_kit):
    results = expected(the_kit)
    attempts = results["generate/L1D0/i0"]["attempts"]
    assert len(attempts) == 9
    del attempts[3]  # the port ran one attempt fewer: its later figures follow from that
    code, out, _ = _check(tmp_path, the_kit, results)
    first = out.splitlines()[0]
    assert code == 3
    assert first.split("]: ", 1)[1] == ("stage attempt 4: the attempt loop: attempts[3].k: expected 4, got 5 "
                                        "(the port's attempt 4 is numbered 5: an attempt dropped, added or out of "
                                        "order)")


def test_a_missing_vector_is_named(tmp_path, the_kit):
    results = expected(the_kit)
    del results["AC-9/golden_ii_subset/reversed"]
    code, out, _ = _check(tmp_path, the_kit, results)
    assert code == 3
    assert "NO RESULT for 1 vector: AC-9/golden_ii_subset/reversed" in out


def _bad(code, out, err, sentence):
    assert (code, out) == (1, "")
    assert err == f"error: {sentence}\n"


def test_a_folder_that_is_not_a_kit_is_one_sentence(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    results = tmp_path / "r.json"
    results.write_text("{}")
    _bad(*run("conformance", "check", str(empty), str(results)),
         f"{empty} is not a conformance kit: it has no kit.json")
    _bad(*run("conformance", "check", str(results), str(results)),
         f"{results} is not a conformance kit: it is a file")


def test_results_of_another_kit_version_or_not_json_are_one_sentence(tmp_path, the_kit):
    path = write_results(tmp_path / "r.json", expected(the_kit), the_kit)
    data = json.loads(path.read_text())
    data["kit_version"] = the_kit.version + 1
    path.write_text(json.dumps(data))
    _bad(*run("conformance", "check", str(KIT), str(path)),
         f"{path} holds results for kit version {the_kit.version + 1}; the kit in {KIT} is version {the_kit.version}")
    data["kit_version"], data["kit_digest"] = the_kit.version, "0" * 16
    path.write_text(json.dumps(data))
    _bad(*run("conformance", "check", str(KIT), str(path)),
         f"{path} holds results for the kit '{'0' * 16}'; the kit in {KIT} is {the_kit.digest} (another export)")
    path.write_text("{not json")
    code, out, err = run("conformance", "check", str(KIT), str(path))
    assert (code, out) == (1, "") and err.startswith(f"error: the results file {path} is not JSON (")
    assert err.count("\n") == 1


def test_an_edited_kit_file_is_refused(tmp_path):
    import shutil

    copy = tmp_path / "kit"
    shutil.copytree(KIT, copy)
    text = (copy / "streams.json").read_text().replace('"counter": 4', '"counter": 5')
    (copy / "streams.json").write_text(text)
    _bad(*run("conformance", "check", str(copy), str(copy / "kit.json")),
         f"{copy / 'streams.json'} does not match the sha256 its manifest records: the kit was edited after export")


def test_export_writes_the_committed_kit_and_refuses_a_file_target(tmp_path):
    code, out, err = run("conformance", "export", str(tmp_path / "kit"), "--tables", str(REPO / "tables"))
    assert (code, err) == (0, "")
    assert out.startswith(f"conformance kit version {kit.KIT_VERSION} (")
    assert {p.name: p.read_bytes() for p in (tmp_path / "kit").iterdir()} == {p.name: p.read_bytes()
                                                                              for p in KIT.iterdir()}
    target = tmp_path / "a_file"
    target.write_text("keep")
    _bad(*run("conformance", "export", str(target)), f"{target} is a file; the conformance kit is written into a folder")
    assert target.read_text() == "keep"


def test_an_extra_key_is_a_divergence_named_after_the_objects_own_keys(tmp_path, the_kit):
    results = expected(the_kit)
    measure = results["generate/L1D1/i0"]["measure"]
    measure["debug"] = 1  # a port's leftover: the document promises exactly the kit's keys
    results["AC-7/golden_i_single_rule"]["why"] = "legal"
    code, out, _ = _check(tmp_path, the_kit, results)
    lines = out.splitlines()
    assert code == 3
    assert lines[0].split("]: ", 1)[1] == ('stage measure: measure.debug: expected null, got 1 (extra key: the kit '
                                           "has no 'debug' here)")
    assert lines[1].split("]: ", 1)[1] == ('stage why: why: expected null, got "legal" (extra key: the kit has no '
                                           "'why' here)")
    # a wrong value in the same object is the news, not the extra key
    measure["revealed"] += 1
    code, out, _ = _check(tmp_path, the_kit, results)
    assert out.splitlines()[0].split("]: ", 1)[1].startswith("stage measure: measure.revealed: expected ")


def test_a_value_of_another_json_type_is_a_divergence(tmp_path, the_kit):
    results = expected(the_kit)
    below = results["below/board_gen/m0/s0"]["values"]
    below[0] = int(below[0])  # a u64 written as a number
    attempt = results["generate/L1D0/i0"]["attempts"][0]
    attempt["placement"]["draws"][0] = float(attempt["placement"]["draws"][0])  # 3.0 for 3: Godot's JSON floats
    attempt = results["generate/L1D1/i0"]["attempts"][0]
    assert attempt["closure"]["revealed"] is None
    attempt["closure"]["revealed"] = 0
    code, out, _ = _check(tmp_path, the_kit, results)
    lines = {line.split(" ", 2)[1]: line.split("]: ", 1)[1] if "]: " in line else line.split(": ", 1)[1]
             for line in out.splitlines() if line.startswith("DIVERGES")}
    assert code == 3
    assert lines["below/board_gen/m0/s0"] == (f'stage bounded draw (below by rejection): values[0]: expected '
                                              f'"{below[0]}", got {below[0]} (JSON type: expected a string, got an '
                                              f"integer)")
    assert lines["generate/L1D0/i0"].endswith("(JSON type: expected an integer, got a number with a fraction or "
                                              "an exponent)")
    assert lines["generate/L1D1/i0"] == ("stage attempt 1 closure: attempts[0].closure.revealed: expected null, "
                                         "got 0 (JSON type: expected null, got an integer)")


def test_a_result_for_no_vector_fails_the_check(tmp_path, the_kit):
    results = expected(the_kit)
    results["generate/L9D9/i0"] = {}
    code, out, _ = _check(tmp_path, the_kit, results)
    total = sum(1 for _ in the_kit.vectors())
    assert code == 3
    assert out.splitlines() == ["NO VECTOR for 1 result: generate/L9D9/i0",
                                f"{total} of {total} vectors agree; 0 diverge, 0 have no result, 1 results name no "
                                f"vector"]
