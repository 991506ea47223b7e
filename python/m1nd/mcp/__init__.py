"""The tool surface shared by the MCP server and the CLI.

``registry`` declares every tool once (parameters, schemas, handler); ``shaping`` fits results into the response
budget; ``tools/<group>.py`` are thin adapters from validated arguments to the services of ``m1nd.workspace``;
``server`` speaks JSON-RPC over stdio and HTTP (standard library only).
"""
