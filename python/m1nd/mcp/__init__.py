"""The MCP face of m1nd: JSON-RPC over stdio (``server``) and HTTP (``http``), standard library only.

It translates the wire to :func:`m1nd.tools.registry.call_tool` and back; the tools themselves (declarations,
validation, shaping, profiles) live in the transport-neutral :mod:`m1nd.tools`, which the CLI uses too. This
package never imports :mod:`m1nd.cli`, the store, the services or the native core.
"""
