"""``boardgen generate``, ``measure``, ``play``, ``bench`` and ``nodemap draw``: one board or one
layout at a time (SPEC 8 "Interfaces"; seed 000 2.6 for the ``--json`` field names, seed 001 AC-8 for
the measure entry point, seed 004 for the node-map draw)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from boardgen_pipeline.board.geometry import LayoutError
from boardgen_pipeline.cli.common import UserError, tables_dir
from boardgen_pipeline.cli_args import TABLES_HELP
from boardgen_pipeline.errors import not_utf8


def _board_text(board, metrics) -> str:
    lines = [
        f"board {metrics['width']}x{metrics['height']} {metrics['board_type']}  row {metrics['row_key']}  "
        f"scope {metrics['scope']} (master seed {metrics['master_seed']})",
        f"exit {metrics['exit']}  alert {metrics['alert']}  attempts {metrics['attempts_used']}  "
        f"inferability {metrics['revealed']}/{metrics['safe_count']} = {metrics['inferability']:.3f} "
        f"(target {metrics['inferability_target']})",
        f"mines {metrics['mines_actual']}/{metrics['mines_target']} (ring removed {metrics['ring_removed']})  "
        f"R0 {metrics['r0_size']}",
        "",
    ]
    numbers = board.numbers
    fog = set(board.fog)
    for y in range(board.height):
        row = []
        for x in range(board.width):
            c = y * board.width + x
            row.append("*" if board.mines[c] else ("f" if c in fog else (str(numbers[c]) if numbers[c] else ".")))
        lines.append(" ".join(row))
    return "\n".join(lines)


def cmd_generate(args) -> int:
    from boardgen_pipeline.board.generator import generate

    if args.variants:
        from boardgen_pipeline.catalog import load_catalog

        catalog = load_catalog(tables_dir(args))
        table = catalog.board_gen
        if catalog.variation is None:
            raise UserError(f"--variants: no variation.toml in {catalog.tables_dir}")
    else:
        from boardgen_pipeline.tables.board_gen import load_board_gen_dir

        table = load_board_gen_dir(tables_dir(args))
    try:
        board, metrics = generate(args.level, args.depth, args.seed, master_seed=args.master_seed, table=table)
    except KeyError as exc:
        raise UserError(exc.args[0]) from None
    overlay = None
    if args.variants:
        from boardgen_pipeline.variants.overlays import overlay_for

        overlay = overlay_for(board, metrics, table, catalog.variation)
    if args.json:
        row = table.resolve(args.level, args.depth)
        out = {**metrics, "row": {"key": list(row.key), **row.fields()}}
        if overlay is not None:
            out["overlay"] = overlay.to_record()
        print(json.dumps(out, sort_keys=False))
    else:
        print(_board_text(board, metrics))
        if overlay is not None:
            from boardgen_pipeline.variants.placement import render_overlay

            print()
            print(render_overlay(board, overlay))
    return 0


def cmd_nodemap_draw(args) -> int:
    from boardgen_pipeline.nodemap import draw_adventure_text
    from boardgen_pipeline.tables.board_gen import load_board_gen_dir

    tables = tables_dir(args)
    keys = set(load_board_gen_dir(tables).keys())
    print(draw_adventure_text(args.seed, args.first_adventure, tables, keys))
    return 0


def _read_layout(name: str) -> str:
    """A layout file's text (``-``: stdin), read as bytes and decoded here:
    stdin's own decoding would turn bad bytes into cells it cannot name."""
    try:
        return (sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()).decode("utf-8-sig")
    except OSError as exc:
        raise UserError(f"cannot read {name}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{name}: {not_utf8(exc)}") from None


def cmd_measure(args) -> int:
    from boardgen_pipeline.board.measure import measure_layout, probability_grid

    text = _read_layout(args.file)
    try:
        result = measure_layout(text, rules=args.rules, spawn_side=args.spawn_side).as_json()
        if args.probabilities:
            result.update(probability_grid(text, rules=args.rules, spawn_side=args.spawn_side))
    except (LayoutError, ValueError) as exc:
        raise UserError(f"{args.file}: {exc}") from None
    print(json.dumps(result))
    return 0


def cmd_play(args) -> int:
    """One JSON line a layout: the perfect player's game. Every
    file is read and checked before the first game, so a bad one costs no
    output."""
    from boardgen_pipeline.board.measure import board_of_layout
    from boardgen_pipeline.board.player import game_json

    boards = []
    for name in args.files:
        try:
            boards.append(board_of_layout(_read_layout(name), spawn_side=args.spawn_side))
        except (LayoutError, ValueError) as exc:
            raise UserError(f"{name}: {exc}") from None
    for name, board in zip(args.files, boards, strict=True):
        print(json.dumps({"file": name, **game_json(board)}))
    return 0



def cmd_bench(args) -> int:
    from boardgen_pipeline.board.bench import bench

    print(json.dumps(bench(args.width, args.height, args.density, args.target, args.cap,
                           args.attempts, args.boards, args.shave, figures=args.figures)))
    return 0


def register(sub) -> None:
    g = sub.add_parser("generate", help="generate one board")
    g.add_argument("--level", type=int, required=True, help="level_index >= 1 (required)")
    g.add_argument("--depth", type=int, required=True, help="node depth >= 0; the floor rule picks the row (required)")
    g.add_argument("--seed", type=int, required=True, help="board_gen scope under the master seed, >= 0 (required)")
    g.add_argument("--master-seed", type=int, default=0, help="master seed, >= 0 (default: 0)")
    g.add_argument("--tables", help=TABLES_HELP)
    g.add_argument("--json", action="store_true", help="one JSON object: layout, metrics, row (default: text)")
    g.add_argument("--variants", action="store_true", help="also draw the board's variant overlay (default: off)")
    g.set_defaults(func=cmd_generate)

    m = sub.add_parser("measure", help="measure a layout (R0, R∞, counts)")
    m.add_argument("file", help="layout file ('-' for stdin): * mine, . safe, f fog; rows by line or / (required)")
    m.add_argument("--rules", choices=("single_subset", "single"), default="single_subset",
                   help="solver rules (default: single_subset)")
    m.add_argument("--spawn-side", type=int, choices=(3, 5), default=3,
                   help="side of the mine-free spawn square (default: 3)")
    m.add_argument("--probabilities", action="store_true",
                   help="add each cell's exact mine probability at the position after R∞ (null: opened; "
                        "default: off)")
    m.set_defaults(func=cmd_measure)

    pl = sub.add_parser("play", help="play layouts with the perfect player (one JSON line a file)")
    pl.add_argument("files", nargs="+", help="layout files ('-' for stdin): * mine, . safe, f fog (required)")
    pl.add_argument("--spawn-side", type=int, choices=(3, 5), default=3,
                    help="side of the mine-free spawn square at the centre (default: 3)")
    pl.set_defaults(func=cmd_play)

    n = sub.add_parser("nodemap", help="node maps")
    nsub = n.add_subparsers(dest="nodemap_command", required=True)
    nd = nsub.add_parser("draw", help="draw the three level maps of one adventure")
    nd.add_argument("--seed", type=int, required=True, help="master seed of the adventure, >= 0 (required)")
    nd.add_argument("--first-adventure", action="store_true",
                    help="the save has not finished an adventure yet: fixed templates, no draw (default: off)")
    nd.add_argument("--tables", help=TABLES_HELP)
    nd.set_defaults(func=cmd_nodemap_draw)

    b = sub.add_parser("bench", help="attempt-loop throughput on one parameter row (board_gen field domains), "
                                     "the work of ../shared/bench/baseline.c")
    b.add_argument("--width", type=int, required=True, help="board_width, 8..64 (required)")
    b.add_argument("--height", type=int, required=True, help="board_height, 8..64 (required)")
    b.add_argument("--density", type=float, required=True, help="mine_density, (0, 0.5] (required)")
    b.add_argument("--target", type=float, required=True, help="inferability_target, [0.85, 1] (required)")
    b.add_argument("--cap", type=int, required=True, help="r0_max_cap, [9, floor(W*H/2)] (required)")
    b.add_argument("--attempts", type=int, required=True, help="max_gen_attempts, 1..32 (required)")
    b.add_argument("--boards", type=int, required=True, help="boards timed, >= 1 (required)")
    b.add_argument("--shave", type=int, default=1, help="shave_ring_radius, 0..2 (default: 1)")
    b.add_argument("--figures", action="store_true",
                   help="also time the calibration's whole entry point (difficulty figures and the perfect player) "
                        "on the same boards, reported beside the attempt loop (figures_seconds, figures_boards_per_s); "
                        "default: off")
    b.set_defaults(func=cmd_bench)
