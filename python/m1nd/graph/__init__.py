"""The in-memory code graph and the computations on it (no storage, no adapters).

``schema`` holds the kind/relation tables, ``engine`` is the only module that imports the native kernels
(``m1nd_core``) and validates everything handed to them, ``nodes`` the node attribute table, ``seeds`` the query →
seed matching, ``semantic`` the trigram TF-IDF fallback of the semantic dimension, ``activation`` the
four-dimension fusion, ``queries`` the why / impact / missing / hypothesize tools' logic, ``cache`` the on-disk
cache of the arrays.
"""
