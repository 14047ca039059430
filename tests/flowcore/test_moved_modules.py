"""Tests for flowcore._moved_modules: module paths from before the package moves still import."""

from __future__ import annotations

import importlib
import pickle
import sys

import pytest

from flowcore._moved_modules import MOVED_MODULES
from flowcore.definition.flow import FlowDefinition
from flowcore.processor.relationship import SUCCESS


@pytest.fixture
def forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    """No old path imported yet in this process, so each test sees the first import."""
    for old in MOVED_MODULES:
        monkeypatch.delitem(sys.modules, old, raising=False)


@pytest.mark.usefixtures("forgotten")
def test_an_old_path_is_the_moved_module_with_a_warning() -> None:
    """``from flowcore.flow import FlowDefinition`` gets the same class, and a warning names
    the new path; the module keeps its own name and spec."""
    with pytest.warns(DeprecationWarning, match=r"import flowcore\.definition\.flow"):
        from flowcore.flow import FlowDefinition as Old

    assert Old is FlowDefinition
    module = sys.modules["flowcore.flow"]
    assert module is sys.modules["flowcore.definition.flow"]
    assert module.__spec__.name == "flowcore.definition.flow"


@pytest.mark.usefixtures("forgotten")
def test_every_old_path_imports_its_new_module() -> None:
    """Each of the eight moved modules, by its old path, is the module it became."""
    for old, new in MOVED_MODULES.items():
        with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
            moved = importlib.import_module(old)
        assert moved is importlib.import_module(new), old


@pytest.mark.usefixtures("forgotten")
def test_a_pickle_naming_the_old_module_loads() -> None:
    """A value pickled before the move (its class named ``flowcore.relationship``) loads as
    the same value of the class that moved."""
    new = pickle.dumps(SUCCESS, protocol=2)
    old = new.replace(b"cflowcore.processor.relationship\n", b"cflowcore.relationship\n")
    assert old != new
    with pytest.warns(DeprecationWarning, match="flowcore.relationship moved"):
        loaded = pickle.loads(old)
    assert loaded == SUCCESS
    assert type(loaded) is type(SUCCESS)


def test_an_unknown_path_still_fails() -> None:
    """Only the moved paths are aliased: any other missing module is still missing."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("flowcore.no_such_module")
