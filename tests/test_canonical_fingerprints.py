"""Every fingerprint hashes one canonical encoding (fingerprints once
encoded data two ways; ``boardgen_pipeline/canonical.py``): a table value
held as a numpy scalar or a Python number, printed under any numpy print
option, gives the same digest, where a ``repr()`` of the same content moved
with numpy (``np.int64(5)`` since numpy 2, ``5`` before)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.canonical import canonical_json, digest
from boardgen_pipeline.catalog import load_catalog

CATALOG = load_catalog()


@pytest.fixture
def legacy_numpy_repr():
    """numpy 1's scalar repr (``5``, ``0.5``), as another numpy release would print them."""
    before = np.get_printoptions()
    np.set_printoptions(legacy="1.25")
    yield
    np.set_printoptions(**before)


def _variation_with_numpy_values():
    v = CATALOG.variation
    types = tuple(replace(t, effect_value=np.int64(t.effect_value), unlock_level=np.int64(t.unlock_level))
                  for t in v.types)
    return replace(v, types=types, pack_min=np.int64(v.pack_min))


def _pools_with_numpy_values():
    return {level: replace(p, procedural=replace(p.procedural, branching=np.float64(p.procedural.branching),
                                                 layers=np.int64(p.procedural.layers)))
            for level, p in CATALOG.pools.items()}


def test_a_variation_table_of_numpy_values_has_the_digest_of_its_python_values(legacy_numpy_repr):
    plain = fingerprints.variation_digest(CATALOG.variation)
    numpy_values = _variation_with_numpy_values()
    assert fingerprints.variation_digest(numpy_values) == plain
    np.set_printoptions(legacy=False)  # numpy 2's repr: the same digest still
    assert fingerprints.variation_digest(numpy_values) == plain


def test_pools_of_numpy_values_have_the_digest_of_their_python_values(legacy_numpy_repr):
    plain = fingerprints.pools_digest(CATALOG.pools)
    numpy_values = _pools_with_numpy_values()
    assert fingerprints.pools_digest(numpy_values) == plain
    np.set_printoptions(legacy=False)
    assert fingerprints.pools_digest(numpy_values) == plain
    keys = CATALOG.board_gen.keys()
    assert fingerprints.draws_fingerprint(numpy_values, 4, keys) == fingerprints.draws_fingerprint(CATALOG.pools, 4, keys)


def test_the_fingerprints_still_see_every_change_of_content():
    v = CATALOG.variation
    assert fingerprints.variation_digest(replace(v, pack_max=v.pack_max - 1)) != fingerprints.variation_digest(v)
    assert fingerprints.variation_digest(replace(v, percent_of_cells=v.percent_of_cells + Fraction(1, 100))) != \
        fingerprints.variation_digest(v)
    assert fingerprints.variation_digest(replace(v, source="elsewhere.toml")) == fingerprints.variation_digest(v)
    level, pool = sorted(CATALOG.pools.items())[0]
    moved = {**CATALOG.pools, level: replace(pool, templates=pool.templates[::-1])}
    assert fingerprints.pools_digest(moved) != fingerprints.pools_digest(CATALOG.pools)
    fp = fingerprints.overlay_fingerprint("b", v, False, "dungeon")
    assert fp != fingerprints.overlay_fingerprint("b", v, True, "dungeon") != fingerprints.overlay_fingerprint(
        "b", v, False, "underdark")
    assert fingerprints.reports_fingerprint({(1, 0): "a", (1, 1): "b"}) == fingerprints.reports_fingerprint(
        {(1, 1): "b", (1, 0): "a"}) != fingerprints.reports_fingerprint({(1, 0): "b", (1, 1): "a"})


def test_the_canonical_encoding_of_each_kind():
    assert canonical_json({"b": (1, np.int64(2)), "a": {np.float64(0.5)}, "f": Fraction(3, 20)}) == \
        '{"a":[0.5],"b":[1,2],"f":"3/20"}'
    assert canonical_json(np.array([[1, 2]], dtype=np.int32)) == "[[1,2]]"
    assert digest({"x": 1}) == digest({"x": np.int64(1)}) and len(digest({"x": 1})) == 16
    with pytest.raises(TypeError, match="no canonical form for object"):
        canonical_json(object())


def test_a_row_fingerprint_is_the_canonical_digest_of_its_fields():
    """The same text the loader hashed before the canonical encoding (json.dumps with sorted keys): no row's fingerprint moved."""
    import hashlib
    import json

    table = CATALOG.board_gen
    for key in table.keys():
        payload = {"spawn_side": table.header.spawn_side, "row": table.rows[key].fields()}
        if table.rows[key].fog_region_count:
            payload["dig_ap_cost"] = table.header.dig_ap_cost
        old = hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
        assert table.row_fingerprint(key) == old == digest(payload)
