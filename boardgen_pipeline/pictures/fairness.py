"""Pictures of what a perfect player risks on a row's boards
(seed 000 "可推理率承诺": a player "loses only to a gamble they
chose").

- :func:`survival_histogram`: the row's boards by survival (the chance the
  player's policy survives the board's guesses), boards that need no guess
  apart, boards too big to analyse counted, never binned;
- :func:`draw_guesses`: the board of least survival with the cells the
  player had to guess lettered in order, each with its P(safe).

Plain markdown text from the board records (``board.player.METRICS``), so
each costs a few lists walked: check F draws them on every row.
"""

from __future__ import annotations

from boardgen_pipeline.pictures.drawings import number_grid, reproduce_command

BINS = 10  # survival bins of 0.1 below 1
BAR = 40
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _guessed(records: list[dict]) -> list[dict]:
    """The analysed boards on which the player guessed."""
    return [r for r in records if r.get("won") is not None and r.get("forced_guesses")]


def survival_histogram(records: list[dict], floor: float | None = None) -> str:
    """Markdown: boards by survival in bins of 0.1, the boards that need no
    guess on a line of their own, ``floor`` (the row's min_mean_survival) named."""
    analysed = [r for r in records if r.get("won") is not None]
    if not analysed:
        return "_no board analysed_"
    counts = [0] * BINS
    for r in _guessed(records):
        counts[min(BINS - 1, int(r["survival"] * BINS))] += 1
    no_guess = len(analysed) - sum(counts)
    peak = max([*counts, no_guess, 1])

    def bar(n: int) -> str:
        return ("#" * max(1, round(BAR * n / peak)) if n else "").ljust(BAR)

    lines = ["survival          boards"]
    labels = [f"[{k / BINS:.1f}, {(k + 1) / BINS:.1f})" for k in range(BINS)] + ["no guess"]
    lines += [f"{label:<16}{bar(n)} {n}" for label, n in zip(labels, [*counts, no_guess], strict=True)]
    mean = sum(r["survival"] for r in analysed) / len(analysed)
    tail = [f"{len(analysed)} boards analysed, mean survival {mean:.3f}"]
    if floor is not None:
        tail.append(f"min_mean_survival {floor}")
    not_analysed = len(records) - len(analysed)
    if not_analysed:
        tail.append(f"{not_analysed} too big to analyse")
    return "\n".join(["```", *lines, "```", ", ".join(tail)])


def worst_guess_record(records: list[dict]) -> dict | None:
    """The analysed board of least survival, ties to the lowest scope; None
    when no board needed a guess."""
    guessed = _guessed(records)
    return min(guessed, key=lambda r: (r["survival"], r["scope"])) if guessed else None


def draw_guesses(record: dict, title: str = "least survival") -> str:
    """Markdown: the board's numbers (``*`` mine, ``f`` fog) with the guessed
    cells lettered ``A``, ``B``... in the order the player opened them, then
    each guess's cell and P(safe), and the command that rebuilds the board."""
    grid = [list(line) for line in number_grid(record["layout"])]
    width = len(grid[0])
    cells, odds = record["guess_cells"], record["guess_p_safe"]
    for i, cell in enumerate(cells):
        grid[cell // width][cell % width] = LETTERS[i] if i < len(LETTERS) else "#"
    outcome = "won" if record["won"] else "lost"
    head = (f"**{title}**: scope `{record['scope']}`, {len(cells)} forced guess(es), survival "
            f"{record['survival']:.3f}, {outcome} on the real layout")
    steps = [f"- `{LETTERS[i] if i < len(LETTERS) else '#'}` (x {c % width}, y {c // width}): P(safe) {p:.3f}"
             for i, (c, p) in enumerate(zip(cells, odds, strict=True))]
    return "\n".join([head, "", "```", *("".join(line) for line in grid), "```", "", *steps, "",
                      f"reproduce: `{reproduce_command(record)}`, then `boardgen play` on its layout"])
