"""Tool profiles: which tools ``tools/list`` offers (issue 15 item 1).

Every tool in a host's list costs context on every turn, and some hosts refuse servers past about 40 tools, so the
server offers a named subset. ``core`` (the default) is the working loop of an agent on a code base: orient
(``health``, ``ingest``), find (``activate``), understand (``why``, ``impact``, ``hypothesize``), feed back
(``learn``), remember and recall (``memory_add``, ``memory_search``, ``wake``) and keep an investigation across
sessions (``trail_save``, ``trail_resume``). The other profiles add a whole group for agents that need it; ``all``
is everything. Tools outside the profile answer "unknown tool" naming the profile that has them.
"""

from __future__ import annotations

from m1nd.errors import InvalidInputError

DEFAULT_PROFILE = "core"

CORE = ("health", "ingest", "activate", "why", "impact", "hypothesize", "learn", "memory_add", "memory_search",
        "wake", "trail_save", "trail_resume")

# The parameters the core profile lists for each of its tools (besides agent_id and max_output_chars): what an
# agent sets in ordinary use. Tuning knobs (decay, thresholds, budgets, rarely used filters) stay accepted on every
# profile but are listed only by the others, which keeps core's tools/list near a tenth of `all`.
CORE_PARAMS: dict[str, tuple[str, ...]] = {
    "health": (),
    "ingest": ("path", "incremental", "exclude"),
    "activate": ("query", "top_k", "node_kinds", "path_prefix", "code_only", "group_by"),
    "why": ("source", "target", "max_paths"),
    "impact": ("node_id", "direction", "top_k"),
    "hypothesize": ("claim",),
    "learn": ("query", "feedback", "node_ids", "wrong_node_ids"),
    "memory_add": ("title", "content", "category", "type", "tags", "code_refs", "session_id", "private"),
    "memory_search": ("query", "category", "code_ref", "mine", "limit"),
    "wake": ("limit",),
    "trail_save": ("label", "hypotheses", "conclusions", "open_questions", "summary"),
    "trail_resume": ("trail_id",),
}

# Groups (Tool.group) each profile adds to the few tools every profile needs to start (health, ingest).
_GROUPS = {
    "graph": ("lifecycle", "graph", "learning", "trails", "diagram"),
    "memory": ("lifecycle", "memory", "wake"),
    "perspectives": ("lifecycle", "perspectives"),
}
PROFILES = ("core", "graph", "memory", "perspectives", "all")
_BASE = ("health", "ingest")
# The perspectives profile cannot start a route without a query: activate finds the seeds to start from.
_EXTRA = {"perspectives": ("activate",)}


def check_profile(name: str, source: str = "--tools") -> str:
    value = name.strip().lower()
    if value not in PROFILES:
        raise InvalidInputError(f"unknown tool profile {name!r} (from {source}); profiles: {', '.join(PROFILES)}",
                                recover=f"pass one of {', '.join(PROFILES)} (core is the default)")
    return value


def profile_tools(profile: str, tools: dict) -> list[str]:
    """Names of the tools of ``profile``, in registration order (``tools``: name -> Tool, all registered)."""
    profile = check_profile(profile)
    if profile == "all":
        return list(tools)
    if profile == "core":
        wanted = set(CORE)
    else:
        wanted = set(_BASE) | set(_EXTRA.get(profile, ()))
        wanted |= {n for n, t in tools.items() if t.group in _GROUPS[profile]}
    return [n for n in tools if n in wanted]


def profiles_with(tool: str, tools: dict) -> list[str]:
    """Profiles that offer ``tool`` (for the message when a client calls a tool outside its profile)."""
    return [p for p in PROFILES if tool in profile_tools(p, tools)]


def listed_params(profile: str, tool: str) -> tuple[str, ...] | None:
    """The parameter names ``tools/list`` shows for ``tool`` under ``profile``; None means all of them."""
    return CORE_PARAMS[tool] if profile == "core" else None
