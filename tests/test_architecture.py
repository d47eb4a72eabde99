"""The layers of the package, checked by import-linter's contracts in ``pyproject.toml``."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_the_import_contracts_hold():
    """cli > gui > app > io > solvers > models, and Qt only in difflab.gui."""
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    done = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Contracts: 2 kept, 0 broken." in done.stdout


def _graph():
    import grimp

    return grimp.build_graph("difflab")


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_no_package_imports_another_packages_private_module():
    """Between packages, only names that a package's ``__init__`` exports are imported."""
    graph = _graph()
    reaching_in = [
        (importer, imported)
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported.startswith("difflab.") and _package(importer) != _package(imported)
        and any(part.startswith("_") for part in imported.split(".")[2:])
    ]
    assert reaching_in == []


def test_no_import_cycles_between_modules():
    graph = _graph()
    cycles = [(a, b) for a in graph.modules for b in graph.find_modules_directly_imported_by(a)
              if b.startswith("difflab") and a != b
              and graph.chain_exists(importer=b, imported=a)]
    assert cycles == []


def test_docs_architecture_lists_the_public_api():
    """Every public name of the packages is in docs/architecture.md, so the list stays true."""
    import types

    import difflab as dl

    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = [f"{module.__name__}.{name}"
               for module in (dl, dl.solvers, dl.io, dl.models)
               for name in dir(module)
               if not name.startswith("_") and not isinstance(getattr(module, name),
                                                               types.ModuleType)
               and f"`{name}`" not in text]
    assert missing == []
