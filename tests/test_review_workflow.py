"""The CI workflow of the calibration diff (``.github/workflows/calibration-diff.yml``,
docs/review.md "In CI"), its commands run here as the runner would run them:
in a clone of a repository this test creates, a pull request's branch
against ``origin/main``, with a stand-in ``gh`` that records the comment."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .review_support import REPO, copy_tables, set_field

WORKFLOW = REPO / ".github" / "workflows" / "calibration-diff.yml"
FAKE_GH = """#!/bin/sh
# stands in for the GitHub CLI: records its arguments and the comment's body
printf '%s\\n' "$@" > "$GH_LOG"
while [ $# -gt 0 ]; do
  if [ "$1" = "--body-file" ]; then cp "$2" "$GH_BODY"; fi
  shift
done
"""


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), "-c", "user.email=t@t", "-c", "user.name=t", *args], check=True,
                   capture_output=True)


def test_the_workflow_runs_on_table_changes_with_full_history_and_may_comment():
    data = workflow()
    triggers = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["pull_request"]["paths"] == ["tables/**"]
    assert data["permissions"]["pull-requests"] == "write"
    steps = data["jobs"]["diff"]["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0


def expressions(text: str, values: dict) -> str:
    """The workflow's ``${{ ... }}`` expressions, as the runner would put them in."""
    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", lambda m: str(values[m.group(1)]), text)


@pytest.fixture
def pull_request(tmp_path) -> Path:
    """``origin`` with the repo's tables on main, and a clone on a pull request's
    branch that makes row (1,1)'s R0 cap too small (A and A' fail)."""
    origin, clone = tmp_path / "origin.git", tmp_path / "work"
    seed = tmp_path / "seed"
    copy_tables(seed / "tables")
    git(tmp_path, "init", "-q", "-b", "main", str(seed))
    git(seed, "add", ".")
    git(seed, "commit", "-qm", "tables")
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(origin))
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", "-b", "smaller-cap")
    set_field(clone / "tables" / "board_gen.toml", (1, 1), "r0_max_cap", 40)
    git(clone, "commit", "-qam", "a smaller cap")
    return clone


def test_the_workflow_commands_run_against_a_pull_request(pull_request, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    outputs = tmp_path / "github_output"
    outputs.write_text("")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "GITHUB_BASE_REF": "main", "GITHUB_OUTPUT": str(outputs), "GITHUB_SERVER_URL": "https://github.example",
           "GITHUB_REPOSITORY": "studio/game", "GITHUB_RUN_ID": "42", "GH_LOG": str(tmp_path / "gh.log"),
           "GH_BODY": str(tmp_path / "comment.md"), "BOARDGEN_WAREHOUSE": str(tmp_path / "no-warehouse")}
    steps = {s.get("name"): s for s in workflow()["jobs"]["diff"]["steps"]}

    def run_step(name: str, values: dict) -> subprocess.CompletedProcess:
        step = steps[name]
        return subprocess.run(["bash", "-e", "-c", expressions(step["run"], values)], cwd=pull_request,
                              env={**env, **{k: expressions(str(v), values) for k, v in step.get("env", {}).items()}},
                              capture_output=True, text=True, timeout=600)

    diff = run_step("calibration diff", {})
    assert diff.returncode == 0, diff.stderr  # the step records the code; the verdict step fails the job
    code = dict(line.split("=", 1) for line in outputs.read_text().splitlines())["code"]
    assert code == "3"
    for name in ("calibration-diff.md", "calibration-diff.html", "calibration-diff.json"):
        assert (pull_request / name).stat().st_size > 0, name
    comment = run_step("comment", {"github.token": "token", "github.event.pull_request.number": 7})
    assert comment.returncode == 0, comment.stderr
    body = (tmp_path / "comment.md").read_text()
    assert body == (pull_request / "calibration-diff.md").read_text()
    assert "| (1,1) | A | pass | **FAIL** | worse |" in body and "`git origin/main" in body
    assert (tmp_path / "gh.log").read_text().split("\n")[:3] == ["pr", "comment", "7"]
    verdict = run_step("verdict", {"steps.diff.outputs.code": code})
    assert verdict.returncode == 3
