"""Re-export of the kind / relation tables for ingest code.

The tables live in :mod:`m1nd.graph.schema` (dependency-free, shared with the graph engine); this module only
re-exports them so ingest code and its tests can write ``from m1nd.ingest.schema import KINDS``.
"""

from m1nd.graph.schema import *
from m1nd.graph.schema import __all__  # noqa: F401
