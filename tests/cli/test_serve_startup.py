"""``serve``'s start-up: the app is built with the cyclic collector paused, and what was built is frozen."""

from __future__ import annotations

import gc

import pytest

from agent_connector_sdk.serving.process import built_to_last


def test_the_build_runs_without_collections_and_its_objects_are_frozen() -> None:
    assert gc.isenabled()
    frozen_before = gc.get_freeze_count()
    try:
        with built_to_last():
            assert not gc.isenabled()
            built = [{"schema": [index]} for index in range(1000)]  # tracked containers
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen_before + len(built)
    finally:
        gc.unfreeze()


def test_a_failed_build_turns_the_collector_back_on_and_freezes_nothing() -> None:
    frozen_before = gc.get_freeze_count()
    with pytest.raises(RuntimeError), built_to_last():
        raise RuntimeError("the document has no operations")
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen_before


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with built_to_last():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
