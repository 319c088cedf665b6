"""``boardgen nightly``, ``ui`` and ``prune``: the commands the Dagster code location provides. The
library imports no Dagster: they are found through the package's entry points and loaded on use."""

from __future__ import annotations

from boardgen_pipeline.cli_args import DAGSTER_HOME_HELP

PLUGINS = "boardgen.commands"  # the commands of the Dagster code location (pyproject.toml entry points)


def _pipeline_command(name: str):
    """A command the Dagster code location provides (the library imports no
    Dagster): found through the package's entry points, loaded on use."""

    def run(args) -> int:
        from importlib.metadata import entry_points

        from boardgen_pipeline.errors import PipelineMissing

        found = [e for e in entry_points(group=PLUGINS) if e.name == name]
        if not found:
            raise PipelineMissing(name, "boardgen_dagster")
        try:
            command = found[0].load()
        except ModuleNotFoundError as exc:
            raise PipelineMissing(name, exc.name or str(exc)) from None
        return command(args)

    return run


def register(sub) -> None:
    ni = sub.add_parser("nightly", help="the nightly calibration through Dagster into the warehouse (what make run runs)")
    from boardgen_pipeline.cli_args import add_nightly_options

    add_nightly_options(ni)
    ni.set_defaults(func=_pipeline_command("nightly"))

    ui = sub.add_parser("ui", help="the Dagster UI and daemon on the same instance (what make ui runs); Ctrl-C stops both")
    ui.add_argument("-p", "--port", type=int, default=3000, help="the UI's port, 1..65535 (default: 3000)")
    ui.add_argument("--host", default="127.0.0.1", help="the address the UI listens on (default: 127.0.0.1)")
    ui.add_argument("--dagster-home", help=DAGSTER_HOME_HELP)
    ui.set_defaults(func=_pipeline_command("ui"))

    pr = sub.add_parser("prune", help="forget old calibration runs of a Dagster home (the warehouse keeps every figure)")
    pr.add_argument("--dagster-home", help=DAGSTER_HOME_HELP)
    pr.add_argument("--keep-runs", type=int, help="keep the newest K calibration runs, K >= 1 (default: "
                                                  "$BOARDGEN_KEEP_RUNS, else the days of --keep-days)")
    pr.add_argument("--keep-days", type=int, help="keep the runs of the last N days, 1..36500 (default: "
                                                  "$BOARDGEN_KEEP_DAYS, else 30)")
    pr.set_defaults(func=_pipeline_command("prune"))
