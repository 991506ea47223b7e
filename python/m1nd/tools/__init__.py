"""The transport-neutral tool layer: what every tool is, whichever face (MCP server, CLI, Python) calls it.

- :mod:`m1nd.tools.registry` — declarations (:class:`~m1nd.tools.registry.Tool`, ``Param``), argument
  validation and :func:`~m1nd.tools.registry.call_tool` (validate, run, shape; errors as results);
- :mod:`m1nd.tools.shaping` — fitting a result into ``max_output_chars``;
- :mod:`m1nd.tools.profiles` — the named subsets of tools a server offers;
- one module per group (``graph``, ``analysis``, ``learning``, ``trails``, ``perspectives``, ``memory``, ``wake``,
  ``diagram``, ``trace``): declarations whose handlers forward the validated arguments to a service of the
  :class:`~m1nd.workspace.Workspace`.

The MCP server (:mod:`m1nd.mcp`) and the CLI (:mod:`m1nd.cli`) both stand on this package and never import each
other. Importing this package registers nothing: :func:`m1nd.tools.registry.load_all` imports the groups on first
use, so ``m1nd --help`` stays fast.
"""

GROUPS = ("graph", "analysis", "learning", "trails", "perspectives", "memory", "wake", "diagram", "trace")
