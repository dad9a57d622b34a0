"""The pure layer (sans-I/O): the gates, the disclosure core, the host core, the canonical encoding.

Nothing here touches a socket, a file or an event loop, and nothing here imports a module above it
(``tests/test_layering.py`` enforces both; ``docs/architecture.md`` draws the floors). Each folder is
entered through its door: :mod:`.contracts`, :mod:`.schema_disclosure` (with :mod:`.schema_disclosure.cache`
and :mod:`.schema_disclosure.encoding`), :mod:`.host` (with :mod:`.host.bounds`), :mod:`.search`; and
the module :mod:`.disclosure_navigation`.
"""

__all__: list[str] = []
