"""pytest fixtures for the refbpe suite (shared helpers live in ``support``)."""

import pytest
from support import cs336_path


@pytest.fixture(scope="session")
def gpt2_files():
    return cs336_path("gpt2_vocab.json"), cs336_path("gpt2_merges.txt")
