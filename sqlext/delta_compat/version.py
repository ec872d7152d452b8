"""``delta.version``: the delta-spark release whose Python API sqlext follows, and which
``tests/deltaspark`` compares it with (sqlext's own version is ``sqlext.__version__``)."""

__version__ = "4.4.0"
