"""The pipeline's steps as plain functions: each one is the body of one Dagster
asset, and ``boardgen calibrate`` runs the same ones (SPEC 9; issue 3).

Flow: ``calibrate_row`` (seed batch -> boards -> F4 checks -> publish or
reject) -> ``report_row`` (``calibration_report``) -> ``overlay_row``
(``variant_overlays``) ; ``draw_node_maps`` (``node_map_draws``) ->
``stratify`` (``calibration_strata``); ``steps.regen`` decides which of them a
table edit makes stale.

The only layer that joins the domain (``calibration``, ``variants``,
``nodemap``) with the ``warehouse``. No Dagster.
"""
