"""Fast checkpoint readers: storage rows instead of decoded states.

One module per storage (:mod:`.memory`, :mod:`.sqlite`, :mod:`.postgres`)
turns that saver's tables or dicts into value-less rows; :mod:`.reader` builds
the same records as the generic reader from them, naming tasks by rebuilding
LangGraph's task ids (:mod:`.naming`) and decoding full states only where a
turn can end. :mod:`.versions` pins the LangGraph versions this was tested on.
"""

from lg_eval.extract.fast._reader import read_fast, storage_for
from lg_eval.extract.fast._rows import FastPathUnavailable, UntestedVersion

__all__ = ["FastPathUnavailable", "UntestedVersion", "read_fast", "storage_for"]
