"""Defaults shared by more than one module: each value has its one home here (issue 16, item 6).

A default that only one function uses stays next to that function; anything a service, a tool declaration and a CLI
option would otherwise each spell out lives here, so changing it is one edit.
"""

from __future__ import annotations

# -- spreading activation (graph) ---------------------------------------------------------------------------------
DECAY = 0.55  # energy kept per hop
THRESHOLD = 0.04  # energy below which a node stops spreading
ACTIVATE_TOP_K = 20  # activate: results returned
ACTIVATE_MAX_HOPS = 5  # activate: spreading depth
ACTIVATE_MAX_SEEDS = 24  # activate: text matches used as seeds
ACTIVATE_MAX_PER_FILE = 3  # activate: results one file may hold (diversity); 0 keeps the raw order
WHY_MAX_HOPS = 6  # why: longest path
WHY_MAX_PATHS = 10  # why: paths returned
WHY_PATH_BUDGET = 10_000  # why: paths explored at most
WHY_MIN_STRENGTH = 1e-4  # why: weaker paths are dropped
IMPACT_MAX_HOPS = 5  # impact: spreading depth
IMPACT_MIN_SIGNAL = 0.01  # impact: weaker nodes are dropped
IMPACT_TOP_K = 50  # impact: nodes returned
IMPACT_MAX_CHAINS = 10  # impact: causal chains returned
WARMUP_BOOST = 0.15  # warmup: boost of the strongest primed node (the others in proportion to their activation)
WARMUP_MAX_PRIMED = 20  # warmup: nodes primed at most
MISSING_MIN_SIBLING = 0.3  # missing: neighbour activation that marks a structural hole
MISSING_TOP_K = 10  # missing: structural holes reported at most
HYPOTHESIS_MAX_HOPS = 5  # hypothesize: longest path considered
HYPOTHESIS_PATH_BUDGET = 1000  # hypothesize: paths explored at most
TRACE_TOP_K = 10  # trace: suspects returned
TRACE_MAX_HOPS = 3  # trace: how far suspicion spreads from the frames
TRAIL_LIST_LIMIT = 50  # trail_list: trails returned

# -- ingest -------------------------------------------------------------------------------------------------------
GIT_WINDOW_DAYS = 365  # co-change and churn are read from this many days of history

# -- learning ---------------------------------------------------------------------------------------------------------
LEARN_STRENGTH = 0.2  # learn: learning rate (halved for partial feedback)
LEARN_PATH_HOPS = 3  # learn: length of the paths linking the query's seeds to the reported nodes
LEARN_PATHS_PER_PAIR = 3  # learn: strongest paths used per (seed, node) pair
DRIFT_TOP_N = 20  # drift: weight drifts listed
DRIFT_MAX_LIST = 50  # drift: cap on new_nodes and removed_nodes

# -- knowledge memory ---------------------------------------------------------------------------------------------
SEARCH_LIMIT = 20  # results of memory search
LIST_LIMIT = 100  # entries of memory list
RECENT_DAYS = 10  # look-back of memory recent
RECENT_LIMIT = 100  # facts of memory recent
RECENT_MIN_RESONANCE = 0.5  # memory recent keeps facts whose (basis) resonance is above this
RESONANCE_CAP = 10  # reinforcement stops here (a relationship's, and reinforce's default cap)
STALE_AFTER_DAYS = 30  # health: a high-resonance entry not activated for this long is stale
THREAD_WEEKLY_DECAY = 0.95  # open threads rank by resonance x this per week of age
WAKE_LIMIT = 20  # places in the wake set (cascade and ritual)
WAKE_DAYS = 7  # the wake cascade's recent layer looks back this many days
WAKE_FETCH_DAYS = 15  # wake-fetch looks back this many days
WAKE_FETCH_LIMIT = 100  # facts of wake-fetch
