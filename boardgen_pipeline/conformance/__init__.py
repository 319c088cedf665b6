"""The game's side: boardgen as the reference a port is held to, and the
source of the game's tables (SPEC 11; seed 001's acceptance table and
"黄金图回归向量协议"; seed 000 "整数对比对，禁浮点容差"; seed 004: a new stream
brings its own vectors). docs/conformance.md is the port's specification.

- ``trace``: the attempt loop traced stage by stage by the readable
  references, held to the compiled generator;
- ``cases``: the fixture rows, boards and table edits of the acceptance cases;
- ``seeds``: the registered seeds of AC-11 and AC-12, found by search;
- ``vectors``: the kit's vectors, file by file; ``kitjson``: their text;
- ``kit``: the kit written, read back and recognised; the result schema;
- ``check``: a port's results against the kit, the first divergence named;
- ``godot``: the tables as Godot 4 text resources and GDScript classes (pure
  text; ``export.godot`` writes them under the calibration's verdict).

Sits above ``calibration`` (the tables' digest) and below ``steps``: it
never touches the warehouse.
"""
