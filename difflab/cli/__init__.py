"""The command line: ``difflab run``, ``sweep``, ``fit``, ``open``, ``models``, ``gui`` ...

Each command is a module that parses its arguments and calls DiffLab's public API;
``main`` dispatches to them, importing each only when it runs.
"""

from .main import main as main
