"""Where libmicrobench is, relative to this package. In the source tree it is
unknown (None); the copies CMake makes in the build tree and the install tree
say (python/location.py.in)."""
LIBRARY_RELPATH = None
LIBRARY_FILE = None
