"""Persistence on SQLite through APSW. ``db`` is the only module that imports apsw."""
