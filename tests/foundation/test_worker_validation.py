"""The worker is built again only for the sandbox's import-lock race (temporalio/sdk-python#585)."""

from __future__ import annotations

import pytest

from workers.main import _import_lock_race

pytestmark = pytest.mark.unit


def _failed_validation(cause: BaseException) -> RuntimeError:
    error = RuntimeError("Failed validating workflow MatchWorkflow")
    error.__cause__ = cause
    return error


def test_the_import_lock_race_is_recognised_through_the_cause_chain() -> None:
    """`KeyError(<thread id>)` under the validation error, however deep, is the race."""
    inner = ImportError("while importing workflows.match")
    inner.__cause__ = KeyError(139764080294784)
    assert _import_lock_race(_failed_validation(inner))


def test_any_other_validation_failure_is_not_retried() -> None:
    """A real problem (a restricted call, a missing module, a KeyError of a name) is raised as it is."""
    assert not _import_lock_race(_failed_validation(ValueError("Cannot access os.environ")))
    assert not _import_lock_race(_failed_validation(KeyError("warnings")))
    assert not _import_lock_race(RuntimeError("no cause"))
