"""The pipeline's steps as plain functions: the bodies of the Dagster assets,
and what ``boardgen calibrate`` runs (SPEC 9).

Flow: ``chain`` (one row: seed batch -> boards -> F4 checks -> publish or
reject -> variant overlays -> overlay checks -> report), run for many rows on
the workers of ``pool`` by ``publish_rows``; ``table_check`` (every row passes
F4); ``draw_node_maps`` (``node_map_draws``) -> ``stratify``
(``calibration_strata``); ``regen`` decides which of them a table edit makes
stale; ``summary`` is the nightly's verdict.

The only layer that joins the domain (``calibration``, ``variants``,
``nodemap``) with the ``warehouse``. No Dagster.
"""
