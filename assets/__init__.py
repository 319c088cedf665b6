"""The Dagster code location of boardgen (SPEC 9; issue 3).

Thin wiring only: every asset, check, schedule and sensor here calls plain
functions of ``boardgen_pipeline.steps`` (``chain``, ``publish_rows``, ``table_check``,
``draw_node_maps``, ``stratify``, ``regen``, ``summary``) and
of ``boardgen_pipeline.warehouse``; it holds no domain rule. ``assets.definitions.defs`` is the ``Definitions``
object that ``workspace.yaml`` loads; ``python -m assets.nightly`` is what
``make run`` calls.
"""
