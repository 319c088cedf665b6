"""``python -m boardgen_pipeline.cli``: the ``boardgen`` executable."""

from boardgen_pipeline.cli import console

console()
