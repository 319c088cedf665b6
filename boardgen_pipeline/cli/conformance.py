"""``boardgen conformance export|check|seeds`` and ``boardgen export --godot``:
what boardgen hands the game's port, and its verdict on the port (SPEC 11;
docs/conformance.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from boardgen_pipeline.cli.common import UserError, tables_dir, warehouse_dir
from boardgen_pipeline.cli_args import TABLES_HELP, WAREHOUSE_HELP
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.words import count


def _catalog(args):
    from boardgen_pipeline.catalog import load_catalog

    return load_catalog(tables_dir(args))


def cmd_export_kit(args) -> int:
    from boardgen_pipeline.conformance import kit, seeds

    target = Path(args.dir)
    if target.exists() and not target.is_dir():
        raise UserError(f"{target} is a file; the conformance kit is written into a folder")
    catalog = _catalog(args)
    try:
        registry = seeds.load_registry()
        texts = kit.export(catalog, target, registry)
    except seeds.StaleSeed as exc:
        print(f"error: {exc}; nothing was written", file=sys.stderr)
        return Exit.CHECK_FAILED
    except (seeds.RegistryError, kit.KitError) as exc:
        raise UserError(str(exc)) from None
    manifest = json.loads(texts[kit.MANIFEST])
    vectors = sum(f["vectors"] for f in manifest["files"].values())
    print(f"conformance kit version {manifest['kit_version']} ({manifest['kit_digest']}): "
          f"{count(vectors, 'vector')} in {count(len(kit.FILES), 'file')}, tables {manifest['tables_digest']}, written to {target}")
    return Exit.OK


def cmd_check(args) -> int:
    from boardgen_pipeline.conformance import check, kit

    try:
        found = kit.load(args.dir)
        results = kit.load_results(args.results, found)
    except kit.KitError as exc:
        raise UserError(str(exc)) from None
    verdict = check.check(found, results)
    print(verdict.report())
    return Exit.OK if verdict.agrees else Exit.CHECK_FAILED


def cmd_seeds(args) -> int:
    from boardgen_pipeline.calibration.fingerprints import tables_digest
    from boardgen_pipeline.conformance import seeds
    from boardgen_pipeline.files import atomic_write

    catalog = _catalog(args)
    try:
        registry = seeds.load_registry()
    except seeds.RegistryError as exc:
        if not args.register:
            raise UserError(str(exc)) from None
        registry = {}
    if args.register:
        entries = [seeds.search(case, catalog.board_gen) for case in seeds.CASES]
        atomic_write(seeds.REGISTRY, seeds.registry_text(entries, tables_digest(catalog.tables_dir)[0]))
        for e in entries:
            print(f"{e['ac']}: registered scope {e['scope']} (searched from {e['search_start']}, {e['examined']} "
                  f"examined): {e['precondition']}: {json.dumps(e['why'])}")
        print(f"written to {seeds.REGISTRY}; export the kit again (boardgen conformance export)")
        return Exit.OK
    verdicts = seeds.verify(catalog.board_gen, registry, search_all=True)
    for v in verdicts:
        print(v.line())
    return Exit.OK if all(v.holds for v in verdicts) else Exit.CHECK_FAILED


def cmd_export_godot(args) -> int:
    from boardgen_pipeline.export import godot

    target = Path(args.godot)
    try:
        godot.check_target(target)
    except godot.TargetError as exc:
        raise UserError(str(exc)) from None
    catalog = _catalog(args)
    try:
        verdict, files = godot.export(catalog, target, warehouse_dir(args), args.samples, args.master_seed,
                                      args.allow_failing)
    except godot.Refused as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return Exit.CHECK_FAILED
    print(f"{count(len(files), 'file')} written to {target} under the verdict {verdict.text()}")
    return Exit.OK


def register(sub) -> None:
    c = sub.add_parser("conformance", help="the conformance kit the game's port is checked against "
                                           "(docs/conformance.md)")
    csub = c.add_subparsers(dest="conformance_command", required=True)
    e = csub.add_parser("export", help="write the conformance kit (JSON vectors, integers only) into a folder")
    e.add_argument("dir", help="the kit's folder, made when absent (required)")
    e.add_argument("--tables", help=TABLES_HELP)
    e.set_defaults(func=cmd_export_kit)
    k = csub.add_parser("check", help="a port's results against a kit: the first divergence of each vector")
    k.add_argument("dir", help="the kit's folder (required)")
    k.add_argument("results", help="the port's results file, JSON in the kit's result schema (required)")
    k.set_defaults(func=cmd_check)
    s = csub.add_parser("seeds", help="the registered seeds of AC-11 and AC-12, searched again and checked")
    s.add_argument("--register", action="store_true",
                   help="write the seeds the search finds now into the registry (default: only check)")
    s.add_argument("--tables", help=TABLES_HELP)
    s.set_defaults(func=cmd_seeds)

    x = sub.add_parser("export", help="the calibrated tables as the game's own resources")
    x.add_argument("--godot", required=True, metavar="DIR",
                   help="folder for the Godot 4 .tres resources and their GDScript classes (required)")
    x.add_argument("--tables", help=TABLES_HELP)
    x.add_argument("--warehouse", help=WAREHOUSE_HELP)
    x.add_argument("--samples", type=int, default=256,
                   help="boards per row of the calibration whose verdict stamps the export, 1..4096 (default: 256)")
    x.add_argument("--master-seed", type=int, default=0, help="master seed of that calibration, >= 0 (default: 0)")
    x.add_argument("--allow-failing", action="store_true",
                   help="export even when the last calibration failed or is missing, stamped so (default: refuse, "
                        "exit 3)")
    x.set_defaults(func=cmd_export_godot)
