"""Pictures a designer reads at a glance (SPEC 9 "a picture (markdown board
drawing or histogram)").

- ``drawings``: markdown text (board drawings with R0/R∞, histograms);
- ``charts``: PNG charts (matplotlib, headless) and their markdown embedding.

Imports ``board`` only (boards are redrawn by the reference solver).
"""
