"""The ``board_gen`` parameter table and TOML reading (seed 000 "调参表",
"加载期参数校验"; seed 001 "加载期校验" F2/F2b/F2c; SPEC 2.7).

Every violation of a table is reported at once (file, row key, field, value,
rule) and nothing is returned unless the whole table is valid. The bottom
layer of the library: imports only ``errors``.
"""
