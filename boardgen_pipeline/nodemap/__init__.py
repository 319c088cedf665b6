"""Level node maps (SPEC 4; seed 004 "关卡节点图生成" v0.5): template pools,
load-time validation, the per-level ``node_map`` draw with the
first-adventure script, step 2 slots, step 3 procedural maps, text drawing,
draw records and stratified measurement.

Plain functions only; the Dagster asset and the CLI call these.
"""

from boardgen_pipeline.nodemap.draw import (
    LABEL,
    OUTCOMES,
    Adventure,
    SaveState,
    draw_adventure,
    draw_template,
    fixed_map,
    gate,
    level_map,
    replay_level,
    script_maps,
)
from boardgen_pipeline.nodemap.measure import (
    ChiSquare,
    Stratified,
    chi_square_uniform,
    draw_record,
    draw_uniformity,
    map_shape,
    regularized_gamma_q,
    simulate_draws,
    stratify,
)
from boardgen_pipeline.nodemap.model import NODE_TYPES, MapNode, Node, NodeMap, Pool, ProceduralParams, Template
from boardgen_pipeline.nodemap.procedural import build_procedural
from boardgen_pipeline.nodemap.render import draw_adventure_text, render_adventure, render_map
from boardgen_pipeline.nodemap.slots import instantiate, roll_slots
from boardgen_pipeline.nodemap.stats import ProceduralReport, procedural_report, step3_report_text
from boardgen_pipeline.nodemap.templates import load_pool_file, load_pools, read_pools, validate_tables
from boardgen_pipeline.nodemap.validate import board_nodes, check_content_discipline, validate_pool, validate_template

__all__ = [
    "LABEL", "OUTCOMES", "NODE_TYPES",
    "Adventure", "SaveState", "ChiSquare", "Stratified", "MapNode", "Node", "NodeMap", "Pool",
    "ProceduralParams", "ProceduralReport", "Template",
    "board_nodes", "build_procedural", "check_content_discipline", "chi_square_uniform", "draw_adventure",
    "draw_adventure_text", "draw_record", "draw_template", "draw_uniformity", "fixed_map", "gate",
    "instantiate", "level_map", "load_pool_file", "map_shape", "load_pools", "procedural_report", "read_pools",
    "regularized_gamma_q", "render_adventure", "render_map", "replay_level", "roll_slots", "script_maps",
    "simulate_draws", "step3_report_text", "stratify", "validate_pool", "validate_tables", "validate_template",
]
