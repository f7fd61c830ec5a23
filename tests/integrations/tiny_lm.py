"""Shared pieces of the trainer-integration tests: a tiny random causal LM and synthetic tokens."""

from __future__ import annotations

from typing import Any

import pytest

VOCAB = 64
SEQ = 8


def tiny_lm() -> Any:
    """A 2-layer GPT-2 with random weights (no download)."""
    transformers = pytest.importorskip("transformers")
    import torch

    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=2, vocab_size=VOCAB, n_positions=SEQ, bos_token_id=0, eos_token_id=0
    )
    return transformers.GPT2LMHeadModel(config)


class TokenDataset:
    """``n`` rows of synthetic tokens (a repeating pattern, so the loss can fall)."""

    def __init__(self, n: int, seed: int = 0) -> None:
        import torch

        gen = torch.Generator().manual_seed(seed)
        start = torch.randint(0, VOCAB, (n, 1), generator=gen)
        self.ids = (start + torch.arange(SEQ)) % VOCAB

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"input_ids": self.ids[i], "labels": self.ids[i]}
