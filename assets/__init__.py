"""The Dagster code location of boardgen (SPEC 9; issue 3).

Thin wiring only: every asset, check, schedule and sensor here calls plain
functions of ``boardgen_pipeline`` (``calibration``, ``overlay_batch``,
``nodemap_batch``, ``strata``, ``publish``, ``regen``, ``tables``,
``pictures``). ``assets.definitions.defs`` is the ``Definitions``
object that ``workspace.yaml`` loads; ``python -m assets.nightly`` is what
``make run`` calls.
"""
