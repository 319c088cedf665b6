"""The attempt loop, compiled (SPEC 2.4-2.5, and SPEC 5 on a fog row): place,
numbers, R0, the legality gates cheapest first, and only for a legal attempt
the closure; when no attempt passed, the exit (best legal, least bad) and
the replay of the chosen attempt; the measure of a layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardgen_pipeline.board.closure_cells import closure
from boardgen_pipeline.board.closure_rows import store_rows
from boardgen_pipeline.board.flood import flood_r0, unreachable_count
from boardgen_pipeline.board.fog_kernels import fog_budget, fog_step
from boardgen_pipeline.board.kernel_args import (
    EXIT_BEST_LEGAL,
    EXIT_LEAST_BAD,
    LOG_DRAWS,
    LOG_FOG,
    LOG_MINES,
    LOG_R0,
    LOG_REMOVED,
    LOG_REVEALED,
    LOG_REVEALED_CORE,
    LOG_SAFE,
    LOG_UNREACH,
    check_arrays,
    check_board_arrays,
    clear_summary,
)
from boardgen_pipeline.board.place_numbers import numbers_from_placed, numbers_of, place


@njit(cache=True, error_model="numpy")
def measure_into(g, s, use_subset):
    """Numbers, R0 and R∞ of the layout in ``s.mines`` and ``s.fog`` (R∞
    left in ``s.rev``, the proven mines in ``s.known``). Returns ``(safe,
    r0, revealed)``."""
    check_arrays(g, s)
    safe = numbers_of(s.mines, g.nb, g.nbn, s.num)
    s.known[:] = 0
    r0 = flood_r0(g, s)
    has_fog = False
    for c in range(s.fog.shape[0]):
        if s.fog[c]:
            has_fog = True
            break
    revealed, _, _, _ = closure(g, s, has_fog, use_subset, np.bool_(True))
    return safe, r0, revealed


@njit(cache=True, error_model="numpy")
def attempt_loop(st, draws, g, plan, fog_rule, s, f, attempts):
    """The attempt loop of SPEC 2.5 (and of SPEC 5 on a fog row) up to the
    first passing attempt, on arrays ``check_sizes`` accepted.

    Per attempt k the log row (``attempts.log[k]``) records the draw count
    at its start (the stream state goes to ``attempts.state[k]``, so any
    attempt can be replayed), ring_removed, actual mines, |S|, |R0|,
    unreachable safe cells, |R∞| and |R∞ - F| (-1 when illegal: legality is
    checked before quality and an illegal attempt is never measured) and
    |F|. ``attempts.summary`` gets the attempts run, whether the last one
    passed, the rejection counts per gate and what the passing attempt
    measured; ``s`` keeps its board (``mines``, ``fog``, ``num``, ``rev`` =
    R∞, ``known``).

    Without fog (``fog_rule.regions == 0``) an attempt draws only its mines
    and the unreachable count is computed only when the cheaper gates pass
    (-1 otherwise). With fog every attempt draws its fog from the same
    stream right after its mines, whatever its legality (seed 001: fog is a
    step of every attempt), and every gate is evaluated."""
    NC = g.width * g.height
    N = plan.mines_target
    regions = fog_rule.regions
    a_state = attempts.state
    log = attempts.log
    out = attempts.summary[0]
    rev = s.rev
    fog = s.fog
    clear_summary(out)
    for k in range(plan.budget):
        a_state[k] = st[0]
        log[k, LOG_DRAWS] = draws[0]
        removed = place(st, draws, g, s, N, plan.shave)
        safe = numbers_from_placed(g, s, N)
        s.known[:] = 0
        fog[:] = 0
        r0 = flood_r0(g, s)
        log[k, LOG_REMOVED] = removed
        log[k, LOG_MINES] = N - removed
        log[k, LOG_SAFE] = safe
        log[k, LOG_R0] = r0
        log[k, LOG_UNREACH] = -1  # not computed: an earlier gate already rejected the attempt
        log[k, LOG_REVEALED] = -1
        log[k, LOG_REVEALED_CORE] = -1
        log[k, LOG_FOG] = 0
        out.ran = k + 1
        unreach = -1
        nfog = 0
        placed = 0
        if regions > 0:
            unreach = unreachable_count(g, s, safe)
            log[k, LOG_UNREACH] = unreach
            for c in range(NC):
                f.r0[c] = rev[c]
            nfog, placed = fog_step(st, draws, g, s, f, fog_rule)
            log[k, LOG_FOG] = nfog
        # legality gates, cheapest first; an illegal attempt is counted under
        # the first gate it fails (GATE_ORDER), and never scored
        if r0 == safe:
            out.free_open_rejected += 1
            continue
        if r0 > plan.r0_cap:
            out.r0_cap_rejected += 1
            continue
        if safe < plan.min_safe:
            out.min_safe_rejected += 1
            continue
        if regions == 0:
            unreach = unreachable_count(g, s, safe)
            log[k, LOG_UNREACH] = unreach
        if unreach > 0:
            out.unreachable_rejected += 1
            continue
        # R∞ grows from R0 as flooded above: fog cells are never zeros (fog
        # hides a number), so flooding through fog would give the same R0
        revealed, in_fog, nk, held = closure(g, s, nfog > 0, True, np.bool_(False))
        core = revealed - in_fog
        log[k, LOG_REVEALED] = revealed
        log[k, LOG_REVEALED_CORE] = core
        # seed 001 F5: both inferability and its core meet the target
        if (np.int64(revealed) * plan.target_den >= plan.target_num * np.int64(max(1, safe))
                and np.int64(core) * plan.target_den >= plan.target_num * np.int64(max(1, safe - nfog))):
            out.passed = 1
            out.chosen = k + 1
            if held:
                store_rows(s.bits, rev, s.known, g.width, g.height)  # the workspace keeps the passing board's R∞
            out.known = nk
            out.revealed = revealed
            out.safe = safe
            out.r0 = r0
            out.removed = removed
            out.unreachable = unreach
            out.revealed_core = core
            out.fog = nfog
            out.placed = placed
            if regions > 0:
                unpaid, paid = fog_budget(g, s, f)
                out.unpaid = unpaid
                out.paid = paid
            return


@njit(cache=True, inline="always", error_model="numpy")
def exit_from_log(g, plan, s, attempts, st, draws):
    """The exit of a board no attempt of which passed (SPEC 2.5; the twin of
    ``generator.choose_exit``, which the tests hold it equal to): the legal
    attempt of highest inferability, ties to the earliest (``best_legal``),
    or with no legal attempt the least bad one by (unreachable safe cells,
    safe cells short of the minimum, R0 over the cap, free open, attempt)
    (``least_bad``; an attempt whose unreachable count an earlier gate left
    uncounted is placed again from its stream state and counted, into its
    log row). Returns ``(exit, chosen attempt 1-based, its unreachable
    count)``; ``s`` holds placements of the counted attempts afterwards
    (``st`` and ``draws``: the one-entry stream arrays they are placed with)."""
    log = attempts.log
    ran = attempts.summary[0].ran
    best = -1
    for k in range(ran):
        r = log[k, LOG_REVEALED]
        if r >= 0 and (best < 0 or r * log[best, LOG_SAFE] > log[best, LOG_REVEALED] * log[k, LOG_SAFE]):
            best = k
    if best >= 0:
        return EXIT_BEST_LEGAL, best + 1, max(0, log[best, LOG_UNREACH])
    chosen = -1
    key = (0, 0, 0, 0)
    for k in range(ran):
        if log[k, LOG_UNREACH] < 0:
            st[0] = attempts.state[k]
            place(st, draws, g, s, plan.mines_target, plan.shave)
            log[k, LOG_UNREACH] = unreachable_count(g, s, numbers_from_placed(g, s, plan.mines_target))
        safe = log[k, LOG_SAFE]
        r0 = log[k, LOG_R0]
        here = (max(0, log[k, LOG_UNREACH]), max(0, plan.min_safe - safe), max(0, r0 - plan.r0_cap),
                1 if r0 == safe else 0)
        if chosen < 0 or here < key:  # strictly less: ties to the earliest attempt
            chosen = k
            key = here
    return EXIT_LEAST_BAD, chosen + 1, key[0]


@njit(cache=True, inline="always", error_model="numpy")
def replay_into(st, draws, g, plan, fog_rule, s, f, out):
    """One attempt from the stream state in ``st``, measured whatever its
    legality (the chosen attempt of a ``best_legal`` or ``least_bad`` exit):
    mines, fog when the row has it, then R∞ with fog. Writes what it
    measured into summary record ``out`` as a passing attempt of
    ``attempt_loop`` does (the run's counts, ``unreachable``, ``exit`` and
    ``chosen`` are left as they are); only the plan's mines and shave are read."""
    NC = g.width * g.height
    removed = place(st, draws, g, s, plan.mines_target, plan.shave)
    numbers_from_placed(g, s, plan.mines_target)
    s.fog[:] = 0
    flood_r0(g, s)
    for c in range(NC):
        f.r0[c] = s.rev[c]
    nfog = 0
    placed = 0
    if fog_rule.regions > 0:
        nfog, placed = fog_step(st, draws, g, s, f, fog_rule)
    safe, r0, revealed = measure_into(g, s, True)
    in_fog = 0
    nk = 0
    for c in range(NC):
        in_fog += s.rev[c] & s.fog[c]
        nk += s.known[c]
    out.known = nk
    out.revealed = revealed
    out.safe = safe
    out.r0 = r0
    out.removed = removed
    out.revealed_core = revealed - in_fog
    out.fog = nfog
    out.placed = placed
    if fog_rule.regions > 0:
        unpaid, paid = fog_budget(g, s, f)
        out.unpaid = unpaid
        out.paid = paid


@njit(cache=True, error_model="numpy")
def replay_board(st, draws, g, plan, fog_rule, s, f, summary):
    """``replay_into`` a cleared ``summary[0]``."""
    check_board_arrays(g, plan, s, f)
    if summary.shape[0] != 1:
        raise ValueError("the summary must hold one record")
    clear_summary(summary[0])
    replay_into(st, draws, g, plan, fog_rule, s, f, summary[0])


@njit(cache=True, inline="always", error_model="numpy")
def finish_board(g, plan, fog_rule, s, f, attempts):
    """After ``attempt_loop``: a board that did not pass gets its exit
    (``exit_from_log``) and the chosen attempt replayed into ``s`` and the
    summary, so that ``s`` holds the board whatever its exit (the caller
    calls it only for such a board)."""
    out = attempts.summary[0]
    st = np.zeros(1, np.uint64)
    draws = np.zeros(1, np.int64)
    exit_, chosen, unreach = exit_from_log(g, plan, s, attempts, st, draws)
    st[0] = attempts.state[chosen - 1]
    draws[0] = 0
    replay_into(st, draws, g, plan, fog_rule, s, f, out)
    out.exit = exit_
    out.chosen = chosen
    out.unreachable = unreach
