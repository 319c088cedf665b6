"""The name of every check the pipeline records, by what it judges: the F4
assertions of seed 001 (A, A'', A', B, B', E and the advisory F), the
overlay checks of seed 003, the node-map and strata checks of seed 004, the
determinism check (seed 000 "同种子同参数必产同图") and the table-wide verdict.

A module of names only, with no imports: what names or labels checks (a
night's summary, the code location's check specs) must not load the kernels
that evaluate them (a second of the nightly's coordinator). The modules that
evaluate the checks take their names from here.
"""

# F4 (``calibration.assertions``)
CHECK_A = "a_no_board_below_target"
CHECK_A2 = "a_double_prime_target_floor"
CHECK_A1 = "a_prime_no_illegal_board"
CHECK_B = "b_fog_regions_placed"
CHECK_B1 = "b_prime_no_fog_on_fogless_row"
CHECK_E = "e_monotone_in_depth"
CHECK_F = "f_mean_survival"
F4 = (CHECK_A, CHECK_A2, CHECK_A1, CHECK_B, CHECK_B1, CHECK_E, CHECK_F)

# the boards of an unchanged row equal the stored ones (``steps.determinism``)
CHECK_BOARDS_DETERMINISTIC = "boards_deterministic"
# every row of the night passes F4 and finished (``steps.table_check``)
CHECK_EVERY_ROW = "every_row_passes_f4"

# overlays (``variants.outcomes``)
CHECK_DOMAIN = "overlay_cells_safe_outside_r0"
CHECK_PACKS = "overlay_packs_connected_in_range"
CHECK_ONE_TYPE = "overlay_one_type_per_board"
CHECK_BOSS = "overlay_boss_rows_global_type"
CHECK_SKEW = "overlay_skew_invariants"
OVERLAYS = (CHECK_DOMAIN, CHECK_PACKS, CHECK_ONE_TYPE, CHECK_BOSS, CHECK_SKEW)

# node-map draws (``steps.draw_node_maps``)
CHECK_TEMPLATES = "node_map_templates_valid"
CHECK_DRAWS_DETERMINISTIC = "node_map_draws_deterministic"
CHECK_UNIFORM = "node_map_draws_uniform"
CHECK_PROCEDURAL = "node_map_procedural_maps_valid"
NODE_MAPS = (CHECK_TEMPLATES, CHECK_DRAWS_DETERMINISTIC, CHECK_UNIFORM, CHECK_PROCEDURAL)

# the stratified figures (``steps.stratify``)
CHECK_COMPLETE = "strata_cover_every_template"

# the target curve's corridor (``tuning.corridor``; SPEC 12)
CHECK_CORRIDOR = "curve_within_corridor"
