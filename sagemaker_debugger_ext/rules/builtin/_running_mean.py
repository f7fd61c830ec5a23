"""A loss logged as the running mean over the epoch (as Keras logs it): its epoch length and noise.

Keras logs, at the j-th batch of an epoch, the mean of the epoch's first j batch losses; it
restarts at the next epoch. Such a value has noise ``sigma / sqrt(j)`` (``sigma``: one batch's
loss noise): the first saves of an epoch are far noisier than the last, and values of one
epoch are correlated (``cov = sigma**2 / max(j_a, j_b)``). Successive differences of the
saved values, and any spread that treats all values alike, misjudge that noise.

With ``P`` steps per epoch (training mode steps counted from 0, as the hooks count them), the
save at mode step ``s`` holds the mean of ``j = s % P + 1`` batches, and two saves of one epoch
at ``j1 < j2`` give back the mean of the batches between them exactly:
``(j2 * r2 - j1 * r1) / (j2 - j1)``, of ``j2 - j1`` batches; the first save of an epoch is its
own block of ``j`` batches. Under the right ``P`` these block means are independent with noise
``sigma / sqrt(n)``; :func:`epoch_length` picks ``P`` by the likelihood of the saved values (the
Gaussian likelihood of the block means' second differences, so that a trend is not noise, with
the transform's Jacobian) against that of plain batch losses (every save one batch): a wrong
``P`` turns the noise of the saved values into noise ``j`` times larger, a running mean read as
plain losses is noise that shrinks within the epoch and jumps at its start. An epoch-level
random offset ``tau`` (an epoch's fresh samples easier or harder than the population) is
measured from the epochs' means (:func:`epoch_noise`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["MIN_GAIN", "EpochNoise", "epoch_length", "epoch_noise", "window_variance"]

# log-likelihood (nats) by which "running mean over P steps" must beat "plain batch losses": a
# likelihood ratio of e**20 (the search tries a few hundred P, each a wrong model of plain losses)
MIN_GAIN = 20.0
_CELLS = 1 << 18  # values per block of lengths weighed at once (a few MB per array)


def _blocks(steps: np.ndarray, values: np.ndarray, p: int | np.ndarray) -> tuple[np.ndarray, ...]:
    """(block means, block sizes, j, same epoch as the previous save) under ``p`` steps per epoch; ``p``
    an array of shape (C, 1): one row per length. Two saves are of one epoch when their j differ by
    their step difference (across an epoch start they differ by that less a multiple of ``p``)."""
    j = steps % p + 1
    gap = np.diff(steps)
    same = np.zeros(j.shape, dtype=bool)
    same[..., 1:] = (np.diff(j, axis=-1) == gap) & (gap > 0)
    n = np.where(same, np.concatenate(([1.0], gap)), j)
    jr = j * values
    step = np.zeros(j.shape)
    step[..., 1:] = np.diff(jr, axis=-1)
    b = np.where(same, step / n, values)
    return b, n, j, same


def _log_likelihoods(steps: np.ndarray, values: np.ndarray, p: np.ndarray | None) -> np.ndarray:
    """Profile log-likelihood of the saved values under each of ``p`` steps per epoch, shape (C, 1) (None:
    plain batch losses, one value); -inf where the values leave no noise to weigh."""
    if p is None:
        b, n, j = (np.atleast_2d(values.astype(float)), np.ones((1, len(values))), np.ones((1, len(values))))
    else:
        b, n, j, _ = _blocks(steps, values, p)
    # a trend, linear locally, is not noise; a value that repeats the one before exactly (frozen weights on a
    # fixed batch) tells no model from another: left out of both
    keep = values[2:] != values[1:-1]
    inv = 1 / n
    e = b[:, 2:] - 2 * b[:, 1:-1] + b[:, :-2]
    w = inv[:, 2:] + 4 * inv[:, 1:-1] + inv[:, :-2]
    jacobian = (j[:, 2:] * inv[:, 2:]) ** 2
    if not keep.all():
        e, w, jacobian = e[:, keep], w[:, keep], jacobian[:, keep]
    k = e.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = np.mean(e * e / w, axis=1) if k else np.zeros(len(b))
        # -1/2 log w + log(j / n) of each kept value (the Jacobian of r -> b), as one log
        ll = -0.5 * k * np.log(s2) - 0.5 * np.sum(np.log(w / jacobian), axis=1)
    return np.where((s2 > 0) & np.isfinite(ll), ll, -np.inf)


def epoch_length(steps: Sequence[int], values: Sequence[float]) -> int | None:
    """Steps per epoch (2 up to the saved span) of a running-mean loss saved at training mode
    ``steps``; None when no length beats plain batch losses by ``MIN_GAIN`` nats, or when the
    values have no noise around a local trend to weigh: none at all, or second differences of
    one sign beyond chance (a sign test at 3 sigma: a smooth curve, as full-batch training's).
    Every length is weighed: the first epoch length is often found with only one epoch start
    seen (a running mean of 24 steps saved every step: from 32 saves on), and epochs of 2 or 3
    saves are found too; the likelihoods of a block of lengths are computed at once, each block
    of at most ``_CELLS`` values (as many lengths as fit)."""
    s = np.asarray(steps, dtype=np.int64)
    r = np.asarray(values, dtype=float)
    if len(s) < 8:
        return None
    plain = float(_log_likelihoods(s, r, None)[0])
    curve = np.diff(r, 2)[r[2:] != r[1:-1]]
    if plain == -math.inf or abs(np.sum(np.sign(curve))) > 3 * math.sqrt(len(curve)):
        return None  # second differences mostly of one sign: a smooth curve (full-batch), no noise to weigh
    best, best_ll = None, plain + MIN_GAIN
    p = np.arange(2, int(s[-1] - s[0]) + 1)
    rows = max(1, _CELLS // len(s))
    for i in range(0, len(p), rows):
        ll = _log_likelihoods(s, r, p[i : i + rows, None])
        if ll[top := int(np.argmax(ll))] > best_ll:
            best, best_ll = int(p[i + top]), float(ll[top])
    return best


@dataclass(frozen=True)
class EpochNoise:
    """Noise of a running-mean loss: ``sigma`` of one batch, ``tau`` of an epoch's offset."""

    steps_per_epoch: int
    sigma: float
    tau: float


def epoch_noise(steps: Sequence[int], values: Sequence[float], p: int, recent: int, epochs: int = 6) -> EpochNoise:
    """``sigma`` from the successive differences of block means within an epoch over the last
    ``recent`` saves (each over its own variance ``1/n1 + 1/n2``); ``tau`` from the second
    differences of the last ``epochs`` complete epochs' means (:func:`_offset_variance`)."""
    s = np.asarray(steps, dtype=np.int64)
    b, n, _, same = _blocks(s, np.asarray(values, dtype=float), p)
    d = np.diff(b)
    v = 1 / n[1:] + 1 / n[:-1]
    within = same[1:]
    first = len(d) - max(recent - 1, 1)
    sel = within & (np.arange(len(d)) >= first)
    sel = sel if sel.any() else within
    sigma2 = float(np.mean(d[sel] ** 2 / v[sel])) if sel.any() else 0.0
    tau2 = _offset_variance(s, np.asarray(values, dtype=float), p, sigma2, epochs)
    return EpochNoise(p, math.sqrt(sigma2), math.sqrt(max(tau2, 0.0)))


def _offset_variance(s: np.ndarray, r: np.ndarray, p: int, sigma2: float, epochs: int) -> float:
    """tau**2 from the second differences of the epochs' means (each epoch's last saved running mean,
    of ``J`` batches) over the last ``epochs`` of them: ``var = 6 tau**2 + sigma**2 (1/J1 + 4/J2 + 1/J3)``;
    a steady climb or decline is not an offset."""
    epoch = s // p
    last = np.flatnonzero(np.diff(epoch) != 0)  # each complete epoch's last save
    if len(last) < 3:
        return 0.0
    m, big_j = r[last][-epochs - 2 :], (s[last] % p + 1).astype(float)[-epochs - 2 :]
    d2 = m[2:] - 2 * m[1:-1] + m[:-2]
    share = sigma2 * (1 / big_j[2:] + 4 / big_j[1:-1] + 1 / big_j[:-2])
    return float(np.mean(d2 * d2 - share)) / 6


def window_variance(steps: Sequence[int], noise: EpochNoise) -> float:
    """Variance of the mean of the running-mean values saved at ``steps``: ``cov = sigma**2 /
    max(j_a, j_b) + tau**2`` for two values of one epoch, 0 across epochs."""
    s = np.asarray(steps, dtype=np.int64)
    j = s % noise.steps_per_epoch + 1
    epoch = s // noise.steps_per_epoch
    one = epoch[:, None] == epoch[None, :]
    cov = np.where(one, noise.sigma**2 / np.maximum(j[:, None], j[None, :]) + noise.tau**2, 0.0)
    return float(cov.sum()) / len(s) ** 2
