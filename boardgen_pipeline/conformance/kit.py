"""The conformance kit: written, read back, recognised (SPEC 11 "boardgen
exports the vectors (a conformance kit)"; STYLE.md's Wycheproof and test262).

A kit is a folder of JSON files (``kitjson``: integers only, u64 values as
decimal strings):

- ``kit.json``, the manifest: the format name, :data:`KIT_VERSION`, the
  metric version, the digest of the tables the kit was made from, each
  file's sha256 and vector count, and the digest of them all (``kit_digest``:
  a result file names it, so results are never checked against another kit);
- one file a family of vectors (:data:`FILES`), each a list of groups
  (``vectors``).

:func:`build` makes every file's text from the tables; :func:`export`
writes them (all of them, atomically each, or nothing when the build
fails); :func:`load` reads a kit and refuses a folder that is not one
(:class:`KitError`: one sentence).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from boardgen_pipeline.board.solver import METRIC_VERSION
from boardgen_pipeline.calibration.fingerprints import tables_digest
from boardgen_pipeline.catalog import Catalog
from boardgen_pipeline.conformance import kitjson, vectors

FORMAT = "boardgen-conformance-kit"
RESULTS_FORMAT = "boardgen-conformance-results"
# 1: streams, the attempt loop traced per attempt, the acceptance cases, overlays, skew, node-map draws
KIT_VERSION = 1
MANIFEST = "kit.json"
FILES = ("streams.json", "generate.json", "acceptance.json", "variants.json", "nodemaps.json")


class KitError(Exception):
    """A folder or file that is not what the command needs: one sentence."""


def _file(name: str, groups: list[dict]) -> str:
    return kitjson.dumps({"format": FORMAT, "kit_version": KIT_VERSION, "file": name, "groups": groups})


def build(catalog: Catalog, registry: dict | None = None) -> dict[str, str]:
    """Every file of the kit of ``catalog``'s tables, by name, as text."""
    generate, traces = vectors.generate_groups(catalog)
    texts = {
        "streams.json": _file("streams.json", vectors.stream_vectors()),
        "generate.json": _file("generate.json", generate),
        "acceptance.json": _file("acceptance.json", vectors.acceptance_groups(catalog, registry)),
        "variants.json": _file("variants.json", vectors.variant_groups(catalog, traces)),
        "nodemaps.json": _file("nodemaps.json", vectors.nodemap_groups(catalog)),
    }
    files = {}
    for name in FILES:
        data = json.loads(texts[name])
        files[name] = {"sha256": hashlib.sha256(texts[name].encode()).hexdigest(),
                       "vectors": sum(len(g["vectors"]) for g in data["groups"])}
    kit_digest = hashlib.sha256("".join(f"{n}\0{files[n]['sha256']}\n" for n in FILES).encode()).hexdigest()[:16]
    manifest = {
        "format": FORMAT,
        "kit_version": KIT_VERSION,
        "metric_version": METRIC_VERSION,
        "tables_digest": tables_digest(catalog.tables_dir)[0],
        "kit_digest": kit_digest,
        "document": "docs/conformance.md",
        "results": {"format": RESULTS_FORMAT, "fields": ["format", "kit_version", "kit_digest", "results"],
                    "results": "an object: vector id -> the outputs, shaped as the vector's `expected`"},
        "files": files,
    }
    return {MANIFEST: kitjson.dumps(manifest), **texts}


def export(catalog: Catalog, target: Path, registry: dict | None = None) -> dict[str, str]:
    """Write the kit into ``target`` (made when absent). The kit is built
    whole first, so a build that fails writes nothing."""
    from boardgen_pipeline.files import atomic_write

    target = Path(target)
    if target.exists() and not target.is_dir():
        raise KitError(f"{target} is a file; the kit is a folder")
    texts = build(catalog, registry)
    target.mkdir(parents=True, exist_ok=True)
    for name in (*FILES, MANIFEST):  # the manifest last: a folder with a manifest holds the files it names
        atomic_write(target / name, texts[name])
    return texts


@dataclass(frozen=True)
class Kit:
    folder: Path
    manifest: dict
    files: dict[str, dict]

    @property
    def version(self) -> int:
        return self.manifest["kit_version"]

    @property
    def digest(self) -> str:
        return self.manifest["kit_digest"]

    def vectors(self):
        """``(file, group, vector)`` of every vector, in kit order."""
        for name in FILES:
            for g in self.files[name]["groups"]:
                for v in g["vectors"]:
                    yield name, g, v


def _read_json(path: Path, what: str):
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise KitError(f"cannot read {what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise KitError(f"{what} {path} is not UTF-8 text") from None
    try:
        return json.loads(text), text
    except ValueError as exc:
        raise KitError(f"{what} {path} is not JSON ({exc})") from None


def load(folder: Path | str) -> Kit:
    """The kit in ``folder``, each file checked against the manifest's sha256."""
    folder = Path(folder)
    if not folder.is_dir():
        raise KitError(f"{folder} is not a conformance kit: it is {'a file' if folder.exists() else 'not there'}")
    if not (folder / MANIFEST).is_file():
        raise KitError(f"{folder} is not a conformance kit: it has no {MANIFEST}")
    manifest, _ = _read_json(folder / MANIFEST, "the kit manifest")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise KitError(f"{folder / MANIFEST} is not a conformance kit manifest (format {FORMAT!r})")
    if manifest.get("kit_version") != KIT_VERSION:
        raise KitError(f"{folder} is a kit of version {manifest.get('kit_version')!r}; this boardgen reads version "
                       f"{KIT_VERSION}")
    files = {}
    for name in FILES:
        want = (manifest.get("files") or {}).get(name, {}).get("sha256")
        data, text = _read_json(folder / name, "the kit file")
        if hashlib.sha256(text.encode()).hexdigest() != want:
            raise KitError(f"{folder / name} does not match the sha256 its manifest records: the kit was edited "
                           f"after export")
        files[name] = data
    return Kit(folder, manifest, files)


def load_results(path: Path | str, kit: Kit) -> dict:
    """A port's results for ``kit``: ``{vector id: outputs}``."""
    path = Path(path)
    if path.is_dir():
        raise KitError(f"{path} is a folder; the results are one JSON file")
    data, _ = _read_json(path, "the results file")
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
        raise KitError(f"{path} is not a results file (an object with \"format\": {RESULTS_FORMAT!r})")
    if data.get("kit_version") != kit.version:
        raise KitError(f"{path} holds results for kit version {data.get('kit_version')!r}; the kit in "
                       f"{kit.folder} is version {kit.version}")
    if data.get("kit_digest") != kit.digest:
        raise KitError(f"{path} holds results for the kit {data.get('kit_digest')!r}; the kit in {kit.folder} is "
                       f"{kit.digest} (another export)")
    if not isinstance(data.get("results"), dict):
        raise KitError(f"{path} has no \"results\" object (vector id -> outputs)")
    return data["results"]


def expected_results(kit: Kit) -> dict:
    """The kit's own expected outputs in the results schema (what a port
    that agrees everywhere writes)."""
    return {"format": RESULTS_FORMAT, "kit_version": kit.version, "kit_digest": kit.digest,
            "results": {v["id"]: v["expected"] for _, _, v in kit.vectors()}}
