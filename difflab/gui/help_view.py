"""Help > User guide: the documentation pages and a searchable list of the models."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..app.guide import guide_pages, model_entries, search_models


def _pair(listing: QListWidget, browser: QTextBrowser) -> QSplitter:
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.addWidget(listing)
    splitter.addWidget(browser)
    splitter.setSizes([200, 700])
    return splitter


class HelpDialog(QDialog):
    """Two tabs: the guide's pages (Markdown) and the models (search by any word)."""

    def __init__(self, lab, parent=None):
        super().__init__(parent)
        self.setWindowTitle("DiffLab user guide")
        self.resize(1000, 700)
        self.pages = guide_pages()
        self.page_list, self.page = QListWidget(), QTextBrowser()
        self.page_list.setObjectName("guide_pages")
        self.page.setOpenExternalLinks(True)
        self.page_list.addItems(list(self.pages))
        self.page_list.currentTextChanged.connect(self.show_page)
        self.entries = model_entries(lab)
        self.search = QLineEdit()
        self.search.setObjectName("model_search")
        self.search.setPlaceholderText("search models: name, domain, equation, parameter…")
        self.model_list, self.model_text = QListWidget(), QTextBrowser()
        self.model_list.setObjectName("guide_models")
        self.search.textChanged.connect(self.filter_models)
        self.model_list.currentTextChanged.connect(self.show_model)
        self.tabs = QTabWidget()
        self.tabs.addTab(_pair(self.page_list, self.page), "User guide")
        self.tabs.addTab(self._models_tab(), "Models")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        self.filter_models("")
        if self.pages:
            self.page_list.setCurrentRow(0)
        else:
            self.page.setPlainText("The documentation pages were not found with this installation.")

    def _models_tab(self) -> QWidget:
        tab = QWidget()
        column = QVBoxLayout(tab)
        column.addWidget(self.search)
        row = QHBoxLayout()
        row.addWidget(_pair(self.model_list, self.model_text))
        column.addLayout(row, 1)
        return tab

    def show_page(self, title: str) -> None:
        path = self.pages.get(title)
        if path is not None:
            self.page.setSearchPaths([str(path.parent)])
            self.page.setMarkdown(path.read_text(encoding="utf-8"))

    def filter_models(self, text: str) -> None:
        self.model_list.clear()
        found = search_models(self.entries, text)
        self.model_list.addItems([e.name for e in found])
        if found:
            self.model_list.setCurrentRow(0)
        else:
            self.model_text.setPlainText(f"no model mentions {text!r}")

    def show_model(self, name: str) -> None:
        entry = next((e for e in self.entries if e.name == name), None)
        if entry is not None:
            self.model_text.setMarkdown(entry.markdown())
