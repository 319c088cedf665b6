"""The ``boardgen`` commands that run the Dagster code location: ``nightly``
(``make run``), ``ui`` (``make ui``) and ``prune``. ``boardgen`` parses and
checks their arguments (``boardgen_pipeline.cli``) and finds these through
the package's entry points (``boardgen.commands``), so the library imports no
Dagster and an installation without the ``pipeline`` extra says what to
install.
"""

import importlib.util

# The pipeline extra, looked up and not imported: loading these commands without it is what `boardgen`
# reports (ModuleNotFoundError), and `boardgen nightly` starts its lanes before it imports Dagster
# itself (importing it here kept the lanes waiting 0.9 s).
for _module in ("dagster", "dagster_webserver"):
    if importlib.util.find_spec(_module) is None:
        raise ModuleNotFoundError(f"No module named {_module!r}", name=_module)


def nightly(args) -> int:
    from . import nightly as night

    return night.run(args)


def ui(args) -> int:
    from . import ui as launcher

    return launcher.run(args)


def prune(args) -> int:
    from .retention import prune_command

    return prune_command(dagster_home=args.dagster_home, keep_runs=args.keep_runs, keep_days=args.keep_days)
