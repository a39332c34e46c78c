"""Fixtures: the tiny LM of ``_tiny_lm`` and one torch thread."""

from __future__ import annotations

import pytest

from tests.methods.dispat import _tiny_lm


@pytest.fixture(scope="session")
def tiny_tokenizer():
    return _tiny_lm.tiny_tokenizer()


@pytest.fixture
def tiny_lm_factory(tiny_tokenizer):
    return _tiny_lm.tiny_lm_factory_for(tiny_tokenizer)


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    # 2 shared cores: more threads only add contention for these tiny models.
    import torch

    torch.set_num_threads(1)
