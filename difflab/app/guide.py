"""The user guide in the app: the documentation pages and a searchable list of the models.

The pages are the ``docs/*.md`` files: found beside the package in a source checkout,
under ``<prefix>/share/difflab/docs`` when installed from a wheel, or in a frozen app's
bundle. Each model's entry has its description, equations (the typed text of an
equation model, the docstring of a built-in one), states and parameters. Qt-free.
"""

import dataclasses
import inspect
import sys
from pathlib import Path

import difflab as dl

FIRST_PAGES = ("README", "user-models", "fitting", "sweeps", "analysis", "solvers")


def docs_folders() -> list[Path]:
    """Where the documentation may be, most specific first."""
    root = Path(dl.__file__).resolve().parent
    bundle = getattr(sys, "_MEIPASS", None)
    places = [root.parent / "docs", Path(sys.prefix) / "share" / "difflab" / "docs"]
    return ([Path(bundle) / "docs"] if bundle else []) + places


def guide_pages() -> dict[str, Path]:
    """The documentation pages by title (the README first when there is one)."""
    folder = next((f for f in docs_folders() if f.is_dir() and any(f.glob("*.md"))), None)
    if folder is None:
        return {}
    pages = {p.stem: p for p in sorted(folder.glob("*.md"))}
    readme = folder.parent / "README.md"
    if readme.is_file():
        pages["README"] = readme
    order = [n for n in FIRST_PAGES if n in pages] + sorted(n for n in pages if n not in FIRST_PAGES)
    return {_title(n): pages[n] for n in order}


def _title(stem: str) -> str:
    return "Overview" if stem == "README" else stem.replace("-", " ").capitalize()


@dataclasses.dataclass(frozen=True)
class ModelEntry:
    """What the guide says of one model."""

    name: str
    domain: str
    description: str
    equations: str
    states: tuple[str, ...]
    parameters: tuple[tuple[str, float, str, str], ...]  # name, default, unit, doc

    def matches(self, text: str) -> bool:
        """Whether every word of ``text`` occurs in the entry (case-insensitive)."""
        haystack = " ".join([self.name, self.domain, self.description, self.equations,
                             *(p[0] for p in self.parameters)]).lower()
        return all(word in haystack for word in text.lower().split())

    def markdown(self) -> str:
        states = ", ".join(self.states[:12]) + (" …" if len(self.states) > 12 else "")
        rows = "\n".join(f"| {n} | {d:g} | {u} | {doc} |" for n, d, u, doc in self.parameters)
        table = f"| parameter | default | unit | meaning |\n|---|---|---|---|\n{rows}" if rows else ""
        return (f"# {self.name}\n\n*{self.domain}*: {self.description}\n\n"
                f"```\n{self.equations}\n```\n\n**States** ({len(self.states)}): {states}\n\n"
                f"{table}\n")


def model_entry(name: str, cls) -> ModelEntry:
    equations = getattr(cls, "equations", None) or inspect.getdoc(cls) or ""
    specs = cls.parameter_specs()
    return ModelEntry(name, cls.domain, cls.description or equations.split("\n")[0],
                      equations.strip(), tuple(cls().state_names),
                      tuple((n, float(s.default), s.unit, s.doc) for n, s in specs.items()))


def model_entries(lab) -> list[ModelEntry]:
    """Every model of ``lab``'s catalogue, by domain then name."""
    return [model_entry(name, lab.model_class(name))
            for names in lab.catalog().values() for name in names]


def search_models(entries, text: str) -> list[ModelEntry]:
    """The entries that mention every word of ``text``."""
    return [e for e in entries if e.matches(text)]
