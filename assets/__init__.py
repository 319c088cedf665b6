"""The Dagster code location of boardgen (SPEC 9; this package is only
wiring: the logic lives in the library).

Thin wiring only: every asset, check, schedule and sensor here calls plain
functions of ``boardgen_pipeline.steps`` and ``boardgen_pipeline.warehouse``
and holds no domain rule. ``boardgen_dagster.definitions.defs`` is what
``workspace.yaml`` loads; ``boardgen nightly`` (``nightly``) is what ``make
run`` calls, ``boardgen_dagster.lane`` the processes that execute its runs.
The repository keeps this package in ``assets/``.
"""

import warnings

# The location uses Dagster's beta/preview APIs knowingly (observable source assets); said once in
# docs/decisions.md, not on every import of every process. Matched by Dagster's wording rather than by
# its warning classes: importing Dagster here would make `boardgen nightly` import it before it
# starts its lanes, which then wait a second longer.
for _stage in ("beta", "preview"):
    warnings.filterwarnings("ignore", message=rf".* is currently in {_stage}, and may have breaking changes")
