"""The mutation score of each mutated module after `make mutate` (see
docs/testing.md): killed / total per module, and the surviving mutants by
name (`mutmut show NAME` prints one). Reads mutmut's own result files
(``mutants/**/*.py.meta``) and writes nothing.

A mutant counts as killed when a test failed on it (or it timed out: a
mutant that makes a loop endless is caught as surely); "no tests" means no
selected test calls the function it changes, and is listed with the
survivors."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

MUTANTS = Path("mutants")
KILLED = {1, 3, 24, -24, 36, 152, 255}  # mutmut's exit codes for killed and timed-out mutants
SURVIVED = {0: "survived", 5: "no tests", 33: "no tests"}


def scores(root: Path = MUTANTS) -> list[tuple[str, Counter, list[str]]]:
    out = []
    for meta in sorted(root.rglob("*.py.meta")):
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        tally = Counter()
        survivors = []
        for name, code in sorted(codes.items()):
            if code is None:
                tally["not run"] += 1
            elif code in KILLED:
                tally["killed"] += 1
            else:
                tally[SURVIVED.get(code, f"exit {code}")] += 1
                survivors.append(f"{name}: {SURVIVED.get(code, f'exit {code}')}")
        out.append((str(meta.relative_to(root)).removesuffix(".meta"), tally, survivors))
    return out


def main() -> int:
    if not MUTANTS.is_dir():
        print("no mutants/ folder here: run `make mutate` first", file=sys.stderr)
        return 1
    rows = scores()
    for module, tally, _ in rows:
        total = sum(tally.values())
        rest = ", ".join(f"{k} {v}" for k, v in sorted(tally.items()) if k != "killed")
        print(f"{module}: {tally['killed']}/{total} killed" + (f" ({rest})" if rest else ""))
    for _, _, survivors in rows:
        for line in survivors:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
