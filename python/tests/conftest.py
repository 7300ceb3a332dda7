"""Shared fixtures: paths of the repository's example models."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def examples() -> pathlib.Path:
    return ROOT / "examples"


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT
