"""What every lane of ``boardgen nightly`` needs, imported once by the
lanes' fork server (``boardgen_pipeline.steps.lanes``): Dagster, the code
location, and the compiled kernels from numba's cache (when it has them: on
an empty cache the lane that runs rows compiles them). Each lane is a fork of that
process and starts with them loaded: two lanes cost one import, and a lane
is ready as soon as the nightly has made the home.
"""

import atexit
import contextlib
import os

import dagster  # noqa: F401
import sqlalchemy  # noqa: F401 - what the instance's storage loads when a lane opens it

from boardgen_dagster import definitions  # noqa: F401
from boardgen_pipeline.processes import freeze_long_lived
from boardgen_pipeline.steps.chain import kernels_cold, warm_up

# From a warm cache the kernels load in about half a second, here, while the nightly makes the home. On a
# cold cache (one that any kernel may be missing from) the lane that runs rows compiles them, with a second
# process from the other end, while the other lane draws the node maps: compiling here
# would hold every lane back for the whole compile, as the night did before the fork server. A failure
# here must not take the server down with it: a lane that runs rows warms the kernels up again before
# its first rows, and says why there.
if not kernels_cold():
    with contextlib.suppress(Exception):
        warm_up()

# What every lane keeps for its life, out of its collections: a lane's rows allocate many records, and a
# full collection walked all of this; nor does a lane then write to the pages it shares with the server.
freeze_long_lived()

# The server exits with the nightly; the interpreter's teardown of Dagster's and numba's modules would
# take about a second in which it still holds the nightly's output open (a pipe reading it waits).
atexit.register(os._exit, 0)
