"""One row tuned through its real boards (``tuning.proposal.tune_row``):
when the calibration batch puts the search's pick out of its corridor, the
search looks again on every probe scope before it proposes (SPEC 12: "proves
each proposal on held-out scopes before it proposes it").

The case is a real one, found by hand on the default table: row (1,1) aimed
at a win rate of 0.75 +- 0.03. Its first 1,024 probe boards read every
density's win rate about 0.04 high (at 0.27: 0.729 there, 0.679 on the next
1,024, 0.684 on 256 boards of master seed 7), so the first search picks
0.27, whose calibration batch reads 0.652 [0.593, 0.709]: out. Searched
again on all 2,048 probe boards, it picks 0.26, which holds."""

from __future__ import annotations

from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.tables.curve_targets import RowTarget
from boardgen_pipeline.tuning import corridor
from boardgen_pipeline.tuning.proposal import RowTask, tune_row

from .review_support import REPO


def test_a_pick_the_calibration_batch_puts_out_of_its_corridor_is_searched_again_on_every_probe():
    table = load_catalog(REPO / "tables").board_gen
    target = RowTarget((1, 1), 1, "win_rate", 0.75, 0.03, "mine_density")
    proposal = tune_row(RowTask(table.rows[(1, 1)], table.header, target))
    assert proposal.state == "reached" and proposal.old == 0.21 and proposal.new == 0.26
    assert proposal.note.startswith("searched again on up to 2048 probe boards a candidate: the calibration batch "
                                    "put mine_density 0.27 out of the corridor")
    assert proposal.heldout.holds and proposal.heldout.verdict.state != corridor.OUT
    assert proposal.heldout_boards == 2 * 256  # the first pick's proof and the second's
