"""Every setting read and checked in one place (``boardgen_pipeline.settings``):
the same domain and the same one sentence from the command line, the
environment and a run's config (the launchpad); a bad value never stops the
code location from loading, and fails the run that reads it, writing
nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import dagster as dg
import pytest

from boardgen_pipeline import settings
from boardgen_pipeline.cli import main as boardgen

from .test_pipeline_support import copy_fixture, defs_for

OUT_OF_DOMAIN = [
    ("samples", "4097", "must be an integer [1, 4096]"),
    ("samples", "0", "must be an integer [1, 4096]"),
    ("master_seed", "-1", "must be an integer [0, 2^63-1]"),
    ("adventures", "0", "must be an integer [1, 1000000]"),
    ("workers", "0", "must be an integer [1, 1024]"),
    ("keep_days", "36501", "must be an integer [1, 36500]"),
    ("keep_runs", "0", "must be an integer >= 1"),
    ("dask", "udp://x:1", "unknown protocol 'udp'"),
    ("timezone", "Mars/Olympus", "must be an IANA time zone"),
    ("rows_per_run", "x", "must be an integer [1, 100000]"),
    ("progress_seconds", "0", "must be a number [0.05, 3600]"),
]


@pytest.mark.parametrize("name, text, why", OUT_OF_DOMAIN)
def test_a_setting_out_of_its_domain_is_one_sentence_from_the_environment_and_from_an_option(name, text, why):
    spec = settings.SETTINGS[name]
    _, bad = settings.resolve({}, {spec.env: text}, names=(name,))
    (v,) = bad
    assert (v.file, v.field, v.value) == ("environment", f"${spec.env}", text) and why in v.message
    assert f"(the default of {spec.option})" in v.message and "\n" not in str(v)
    value = text if spec.kind not in ("int", "float") else (int(text) if text.lstrip("-").isdigit() else text)
    _, bad = settings.resolve({name: value}, {}, names=(name,), prog="boardgen nightly")
    (v,) = bad
    assert (v.file, v.field) == ("boardgen nightly", spec.option) and why in v.message


def test_an_option_wins_over_its_variable_and_the_default_over_nothing():
    found, bad = settings.resolve({"samples": 8}, {"BOARDGEN_SAMPLES": "0", "BOARDGEN_MASTER_SEED": "7"},
                                  names=("samples", "master_seed", "adventures"))
    assert bad == [] and (found.samples, found.master_seed, found.adventures) == (8, 7, settings.DEFAULT_ADVENTURES)
    assert found.source == {"samples": "--samples", "master_seed": "$BOARDGEN_MASTER_SEED"}


def test_a_bad_cron_or_time_zone_falls_back_to_the_default_and_is_reported():
    def problem(text):
        return None if text.count(" ") == 4 else "not five fields"

    cron, tz, bad = settings.schedule_settings({"BOARDGEN_NIGHTLY_CRON": "every night",
                                                "BOARDGEN_TIMEZONE": "Europe/Nowhere"}, cron_problem=problem)
    assert (cron, tz) == (settings.DEFAULT_CRON, settings.DEFAULT_TIMEZONE)
    assert sorted(v.field for v in bad) == ["$BOARDGEN_NIGHTLY_CRON", "$BOARDGEN_TIMEZONE"]
    cron, tz, bad = settings.schedule_settings({"BOARDGEN_NIGHTLY_CRON": "30 3 * * *",
                                                "BOARDGEN_TIMEZONE": "Europe/Paris"}, cron_problem=problem)
    assert (cron, tz, bad) == ("30 3 * * *", "Europe/Paris", [])


def test_the_code_location_loads_whatever_the_environment_says_and_the_tick_says_why():
    """A typo in any setting leaves the code location loadable; the schedule
    runs at its default time and each of its ticks fails with the sentence."""
    env = {**os.environ, "BOARDGEN_NIGHTLY_CRON": "not a cron", "BOARDGEN_TIMEZONE": "Mars/Olympus",
           "BOARDGEN_SAMPLES": "lots", "BOARDGEN_WORKERS": "x", "BOARDGEN_ROWS_PER_RUN": "-1",
           "BOARDGEN_KEEP_DAYS": "month"}
    code = ("import dagster as dg\n"
            "from boardgen_dagster import definitions, automation\n"
            "dg.Definitions.validate_loadable(definitions.defs)\n"
            "print(automation.nightly_calibration.cron_schedule, automation.nightly_calibration.execution_timezone)\n"
            "print(len(automation.SCHEDULE_PROBLEMS))\n")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["0", "2", "*", "*", "*", "UTC", "2"]


def test_check_settings_prints_every_setting_and_names_each_bad_one(capsys, monkeypatch):
    monkeypatch.setenv("BOARDGEN_NIGHTLY_CRON", "61 2 * * *")
    monkeypatch.setenv("BOARDGEN_SAMPLES", "5000")
    assert boardgen(["nightly", "--check-settings"]) == 2
    out, err = capsys.readouterr()
    assert "--samples / $BOARDGEN_SAMPLES" in out and "--cron / $BOARDGEN_NIGHTLY_CRON" in out
    lines = err.strip().splitlines()
    assert len(lines) == 2 and any("$BOARDGEN_NIGHTLY_CRON" in v for v in lines)
    assert any("$BOARDGEN_SAMPLES = '5000'" in v and "[1, 4096]" in v for v in lines)
    monkeypatch.delenv("BOARDGEN_NIGHTLY_CRON")
    monkeypatch.delenv("BOARDGEN_SAMPLES")
    assert boardgen(["nightly", "--check-settings"]) == 0


@pytest.mark.parametrize("config, field", [({"samples": 9999}, "settings.samples"),
                                           ({"master_seed": -3}, "settings.master_seed"),
                                           ({"keep_days": 0}, "settings.keep_days")])
def test_a_launchpad_value_out_of_its_domain_fails_the_run_in_one_sentence_and_writes_nothing(tmp_path, config, field):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    defs = defs_for(tables, root)
    job = defs.resolve_job_def("calibration_prepare")
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(instance=instance, raise_on_error=False,
                                        run_config={"resources": {"settings": {"config": config}}})
    assert not result.success
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    text = failure.step_failure_data.user_failure_data.description
    assert text.startswith("1 setting violation:") and f"field {field} = " in text
    assert len(text.strip().splitlines()) == 2
    assert not root.exists()


def test_a_bad_environment_value_fails_the_run_that_reads_it_not_the_load(tmp_path, monkeypatch):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    monkeypatch.setenv("BOARDGEN_SAMPLES", "5000")
    from boardgen_dagster.definitions import build_definitions
    from boardgen_dagster.resources import BoardgenSettings

    defs = build_definitions(BoardgenSettings(tables_dir=str(tables), warehouse_root=str(root)))
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def("calibration_prepare").execute_in_process(instance=instance,
                                                                                raise_on_error=False)
    assert not result.success
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    assert "$BOARDGEN_SAMPLES = '5000'" in failure.step_failure_data.user_failure_data.description
    assert not root.exists()
