"""The time-series plot: the chosen states, derived quantities and typed expressions
against time, the current run solid and kept runs dashed."""

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QMenu, QToolButton

from ..app.lab import Lab
from ..app.runs import complete
from ..app.views import ExpressionBook, derived_names, derived_series, expression_names
from .derived_dialog import ExpressionDialog
from .plots import (
    GRID_ALPHA,
    THIN_ABOVE,
    RunPlot,
    configure_plot,
    peak_decimate,
    run_pen,
    state_color,
)

MENU_BLOCK = 20  # states per submenu of a model with many states


class TimeSeriesPlot(RunPlot):
    """The chosen states against time: the current run solid, kept runs dashed."""

    title = "Time series"

    def __init__(self, lab: Lab, parent=None):
        super().__init__(lab, parent)
        configure_plot(self.plot, "t", "value")
        item = self.plot.getPlotItem()
        # Plot-wide, so every curve added gets it (PlotItem.addItem applies its own modes).
        item.setDownsampling(auto=True, mode="peak")
        item.setClipToView(True)
        self._held = False
        self.states_button = QToolButton()
        self.states_button.setText("States")
        self.states_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.states_menu = QMenu(self.states_button)
        self.states_button.setMenu(self.states_menu)
        self.toolbar.addWidget(QLabel("Show:"))
        self.toolbar.addWidget(self.states_button)
        self.shown = QLabel()
        self.toolbar.addWidget(self.shown, 1)
        self.derived: tuple[str, ...] = ()
        self.derived_shown: set[str] = set()  # the model's quantities and typed expressions
        self.expressions = ExpressionBook()  # typed by the user, per model
        self.typed: tuple = ()  # the current model's DerivedExpressions
        self._derived_cache: dict = {}
        lab.events.layout.connect(lambda e: self._fill_menu())
        lab.events.model.connect(self._model_derived)
        self._model_derived(None)

    def _model_derived(self, event) -> None:
        if event is None or not getattr(event, "catalog", False):
            self.derived = derived_names(self.lab.model)
            self.typed = self.expressions.compiled(self.lab.model_name, self.lab.model)
            self.derived_shown &= set(self.derived_all())
            self._derived_cache.clear()
        self._fill_menu()

    def derived_all(self) -> tuple[str, ...]:
        """The model's derived quantities, then the expressions typed for it."""
        return (*self.derived, *(e.text for e in self.typed))

    def _fill_menu(self) -> None:
        """Derived quantities first, then the states (in blocks when there are many)."""
        self.states_menu.clear()
        self.states_menu.addSection("Derived")
        for name in self.derived_all():
            self._add_toggle(self.states_menu, name, name in self.derived_shown,
                             self.show_derived)
        self.states_menu.addAction("Add expression…", self.ask_expression)
        if self.typed:
            remove = self.states_menu.addMenu("Remove expression")
            for expression in self.typed:
                remove.addAction(expression.text,
                                 lambda text=expression.text: self.remove_expression(text))
        self.states_menu.addSection("States")
        chosen, states = set(self.lab.layout.time_states), self.lab.state_names
        for start in range(0, len(states), MENU_BLOCK):
            block = states[start:start + MENU_BLOCK]
            menu = self.states_menu if len(states) <= MENU_BLOCK else \
                self.states_menu.addMenu(f"{block[0]} … {block[-1]}")
            for state in block:
                self._add_toggle(menu, state, state in chosen, self._toggle)
        names = [*sorted(self.derived_shown), *self.lab.layout.time_states]
        more = len(names) - 6
        self.shown.setText(f"  {', '.join(names[:6])}" + (f" and {more} more" if more > 0 else ""))

    def _add_toggle(self, menu: QMenu, name: str, checked: bool, slot) -> None:
        action = QAction(name, menu)
        action.setCheckable(True)
        action.setChecked(checked)
        action.toggled.connect(lambda on, s=name: slot(s, on))
        menu.addAction(action)

    def show_derived(self, name: str, on: bool) -> None:
        """Show or hide the derived quantity (or typed expression) ``name``."""
        if name not in self.derived_all():
            raise ValueError(f"{self.lab.model_name} has no derived quantity {name!r}")
        (self.derived_shown.add if on else self.derived_shown.discard)(name)
        self._fill_menu()
        self.redraw()

    def ask_expression(self) -> ExpressionDialog:
        """Open the dialog in which an expression is typed (added and shown on OK)."""
        dialog = ExpressionDialog(expression_names(self.lab.model), self.add_expression, self)
        dialog.open()
        return dialog

    def add_expression(self, text: str) -> None:
        """Keep ``text`` for this model and plot it (``ValueError`` says why it cannot be)."""
        expression = self.expressions.add(self.lab.model_name, self.lab.model, text)
        self.typed = (*self.typed, expression)
        self.show_derived(expression.text, True)

    def remove_expression(self, text: str) -> None:
        """Forget the typed expression ``text`` of this model and remove its curves."""
        self.expressions.remove(self.lab.model_name, text)
        self.typed = tuple(e for e in self.typed if e.text != text)
        self.derived_shown.discard(text)
        self._fill_menu()
        self.redraw()

    def restore_expressions(self, texts: dict | None) -> None:
        """Add the expressions a session file kept (model name -> texts)."""
        self.expressions.update(texts or {})
        self._model_derived(None)

    def _toggle(self, state: str, on: bool) -> None:
        states = [s for s in self.lab.state_names
                  if (s in self.lab.layout.time_states and s != state) or (s == state and on)]
        self.lab.set_layout(time_states=tuple(states))

    def draw(self) -> None:
        self._frame_time_axis()
        super().draw()

    def _frame_time_axis(self) -> None:
        """While a run streams in, hold the time axis at ``[t0, t1]`` and hide the grid.

        The axis then keeps its ticks instead of re-laying them out on every frame as the
        curves grow, and the axes (which draw the grid lines across the plot) need not be
        repainted with the curves: a quarter of the cost of a frame.
        """
        run, item = self.lab.current, self.plot.getPlotItem()
        streaming = run is not None and not complete(run)
        if streaming and not self._held:
            item.setXRange(run.settings.t0, run.settings.t1, padding=0.02)
            item.showGrid(x=False, y=False)
            self._held = True
        elif not streaming and self._held:
            item.enableAutoRange(x=True)
            item.showGrid(x=True, y=True, alpha=GRID_ALPHA)
            self._held = False

    def wanted(self):
        names = self.lab.state_names
        out = {}
        for key, index, run in self.runs():
            n = len(run.ts)
            for state in self.lab.layout.time_states:
                if state not in run.state_names:
                    continue
                j = run.state_names.index(state)
                pen = run_pen(index, state_color(names.index(state), len(names)),
                              thin=n > THIN_ABOVE)
                label = state if index is None else f"{key}: {state}"
                x, y = run.ts, run.ys[:, j]
                if not complete(run):  # streaming: redrawn every frame, so keep it small
                    x, y = peak_decimate(x, y)
                out[(key, state)] = (pen, label, x, y, run.ok)
            out.update(self._derived_curves(key, index, run))
        return out

    def _derived_curves(self, key, index, run) -> dict:
        if not self.derived_shown or not complete(run):
            return {}
        series = self._derived_series(key, run)
        out, offset = {}, len(self.lab.state_names)
        for i, name in enumerate(self.derived_all()):
            if name in self.derived_shown and name in series:
                pen = run_pen(index, state_color(offset + i), thin=len(run.ts) > THIN_ABOVE)
                label = name if index is None else f"{key}: {name}"
                curve = name if name in self.derived else f"= {name}"  # not a state's key
                out[(key, curve)] = (pen, label, run.ts, series[name], run.ok)
        return out

    def _derived_series(self, key, run) -> dict:
        """The derived quantities along ``run``, each computed once per run and length."""
        cache_key = (key, id(run), len(run.ts))
        series = self._derived_cache.get(cache_key)
        if series is None:
            series = derived_series(run.model, run.ys)
            self._derived_cache = {k: v for k, v in self._derived_cache.items() if k[0] != key}
            self._derived_cache[cache_key] = series
        for expression in self.typed:
            if expression.text in self.derived_shown and expression.text not in series:
                try:
                    series[expression.text] = expression.series(run)
                except (KeyError, ValueError):  # a kept run without a name it uses
                    continue
        return series
