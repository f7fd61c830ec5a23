"""A training loss as Keras logs it: the running mean over the epoch's batches (shared by the rules tests)."""

from __future__ import annotations

import numpy as np


def running_mean_epochs(
    seed: int,
    epochs: int = 12,
    batches: int = 24,
    *,
    level: float = 0.1,
    luck: float = 0.0,
    rise_from: int = -1,
    rate: float = 0.004,
) -> dict[int, float]:
    """Keras logs the training loss as the running mean over the epoch's batches: smooth within an
    epoch (noisy at its start), reset at the next. Batch losses: converged at ``level``, noise 0.05;
    ``luck``: each epoch's fresh samples are easier or harder than the population by N(0, luck);
    from step ``rise_from`` on the loss truly climbs by ``rate`` a step (a learning rate too high)."""
    rng = np.random.default_rng(seed)
    out, g = {}, 0
    for e in range(epochs):
        seen: list[float] = []
        offset = luck * rng.standard_normal() if luck else 0.0
        for _ in range(batches):
            rise = rate * (g - rise_from) if 0 <= rise_from <= g else 0.0
            seen.append(level + 0.5 * np.exp(-e) + offset + rise + 0.05 * rng.standard_normal())
            out[g] = float(np.mean(seen))
            g += 1
    return out
