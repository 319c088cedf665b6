"""The batch driver (for speed): ``run_batch`` runs the attempt loop of many
boards of one row in one kernel call (a numba call unboxes each of its
arrays: the batch pays that once), and the attempt logs as Python reads them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boardgen_pipeline.board.attempt_loop import attempt_loop, finish_board
from boardgen_pipeline.board.kernel_args import (
    LOG_FOG,
    LOG_MINES,
    LOG_R0,
    LOG_REMOVED,
    LOG_REVEALED,
    LOG_REVEALED_CORE,
    LOG_SAFE,
    LOG_UNREACH,
    Attempts,
    check_sizes,
)


@njit(cache=True, error_model="numpy")
def run_batch(states, g, plan, fog_rule, s, f, res):
    """``attempt_loop`` for every stream state of ``states`` (draw counts start
    at 0): one call for a row's whole batch, so the per-call cost of a
    kernel is paid once. ``res`` is a :class:`BatchResult`: board b's
    summary record goes to ``res.summary[b]``, the draws it took to ``res.draws[b]``,
    the stream state after it to ``res.state[b]``, its attempt log to
    ``res.attempt_state[b]`` and ``res.log[b]``, and its mines and fog to
    ``res.mines[b]`` and ``res.fog[b]``: the passing attempt's, or the one
    its exit chose (``finish_board``), whose measure the summary then holds."""
    B = states.shape[0]
    NC = g.width * g.height
    if (res.summary.shape[0] < B or res.state.shape[0] < B or res.mines.shape[0] < B or res.fog.shape[0] < B
            or res.attempt_state.shape[0] < B or res.log.shape[0] < B or res.draws.shape[0] < B):
        raise ValueError("batch output arrays do not fit the batch")
    if res.mines.shape[1] != NC or res.fog.shape[1] != NC:
        raise ValueError("batch output arrays do not match the board size")
    st = np.zeros(1, np.uint64)
    draws = np.zeros(1, np.int64)
    if B > 0:  # every board's log has the first one's shape: the arrays are checked once
        check_sizes(g, plan, s, f, Attempts(res.attempt_state[0], res.log[0], res.summary[0:1]))
    for b in range(B):
        st[0] = states[b]
        draws[0] = 0
        attempts = Attempts(res.attempt_state[b], res.log[b], res.summary[b : b + 1])
        attempt_loop(st, draws, g, plan, fog_rule, s, f, attempts)
        res.state[b] = st[0]
        res.draws[b] = draws[0]
        if res.summary[b].passed != 1:  # a call only where it does something: the hot loop stays small
            finish_board(g, plan, fog_rule, s, f, attempts)
        for c in range(NC):
            res.mines[b, c] = s.mines[c]
            res.fog[b, c] = s.fog[c]


class AttemptLog(NamedTuple):
    """What ``attempt_loop`` recorded for one board, one entry per attempt run (arrays are
    views of the workspace's, valid until its next call)."""

    ran: int
    passed: bool
    rejected: dict  # attempts rejected per gate, under their first failed gate
    known: int  # mines the solver proved on the last attempt (when it passed)
    state: np.ndarray  # stream state at the attempt's start (to replay it)
    removed: np.ndarray
    mines: np.ndarray
    safe: np.ndarray
    r0: np.ndarray
    unreachable: np.ndarray  # -1: not computed, an earlier gate rejected the attempt
    revealed: np.ndarray  # -1: illegal, never scored
    revealed_core: np.ndarray  # |R∞ - F|; -1: illegal
    fog: np.ndarray  # |F| of the attempt (0 on a row without fog)
    summary: np.ndarray  # SUMMARY [1]: the board's summary record (what the passing attempt measured)


class BatchResult(NamedTuple):
    """What ``run_batch`` recorded for a batch of stream states (arrays are
    views of the workspace's, valid until its next call)."""

    summary: np.ndarray  # SUMMARY [boards]: each board's summary record
    draws: np.ndarray  # int64 [boards]: the draws each board took
    state: np.ndarray  # stream state after each board
    mines: np.ndarray  # [boards, cells]: the board's mines (its passing or chosen attempt's)
    fog: np.ndarray  # [boards, cells]: its fog
    attempt_state: np.ndarray  # [boards, budget]: stream state at each attempt's start
    log: np.ndarray  # [boards, budget, LOG_SIZE]: each board's attempt log

    def attempts(self, b: int) -> AttemptLog:
        """Board ``b``'s attempt log, as ``Workspace.run_attempts`` gives it."""
        return attempt_log(self.summary[b : b + 1], self.attempt_state[b], self.log[b])


def attempt_log(summary: np.ndarray, state: np.ndarray, log: np.ndarray) -> AttemptLog:
    """The :class:`AttemptLog` of one board from its summary (one record), the
    stream state at each attempt's start and its log rows (LOG_*), cut to the
    attempts run."""
    r = summary[0]
    ran = int(r["ran"])
    lg = log[:ran]
    rejected = {k: int(r[k]) for k in ("r0_cap_rejected", "unreachable_rejected", "free_open_rejected",
                                       "min_safe_rejected")}
    return AttemptLog(ran, bool(r["passed"]), rejected, int(r["known"]), state[:ran],
                      lg[:, LOG_REMOVED], lg[:, LOG_MINES], lg[:, LOG_SAFE], lg[:, LOG_R0], lg[:, LOG_UNREACH],
                      lg[:, LOG_REVEALED], lg[:, LOG_REVEALED_CORE], lg[:, LOG_FOG], summary)
