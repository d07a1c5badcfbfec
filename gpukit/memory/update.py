"""The optimizer's update in a training step's peak: its temporaries and the fitted update terms.

What the update holds beside the forward and backward passes (:data:`UPDATE_WORKSPACE_FIT`, the one
fitted part of the estimate, and :data:`PENDING_UPDATE_TEMPORARIES`, the temporaries that wait for a
gradient), the bounds an update can physically hold, and the bounded least squares that fits the terms
on ``benchmarks/memory_accuracy.py``'s measured cases.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import ParameterError

#: Bytes the gradients and the optimizer's update hold at the peak, besides the temporaries that
#: wait for a gradient (:data:`PENDING_UPDATE_TEMPORARIES`), as (share of the trainable weights'
#: bytes, multiples of the largest dense-gradient variable's bytes, multiples of the largest
#: embedding table's bytes, multiples of the largest embedding table's bytes after the backward
#: pass). TensorFlow updates a variable as soon as its gradient is ready, so not every gradient is
#: alive at once, and each update makes temporaries of its variable's size; an embedding's gradient
#: is sparse (the rows a batch touched), and what an update makes of it depends on the optimizer
#: (SGD scatters it; Adam's moment updates densify it). The first three are added to the forward and
#: backward passes' peak. The last is a peak of its own: an embedding comes first in its model, so
#: its gradient is the backward pass's last and its update runs when the activations are gone. Where
#: the activations are small (small models, small batches) that is the step's peak: TensorFlow's
#: profiler shows keras-textcnn's Adam step peaking at ``adam/UnsortedSegmentSum`` with its two
#: table-sized densified gradients alive, and keras-encoder at batch 2 peaking in the backward pass
#: with none of the update's temporaries (``benchmarks/memory_peaks.py``, docs/accuracy/memory-peaks.md).
#: The only fitted figures of the estimate: least squares on the float32 training cases of
#: ``benchmarks/memory_accuracy.py`` (every case recording how it was measured), with the waiting
#: temporaries counted, each term held within what the update can physically hold
#: (:func:`update_term_bounds`). Only Adam's fit takes the update after the backward pass (the two
#: densified gradients and the allocator's chunks around them). No term constant in the batch follows
#: where the allocator places those chunks, which moves keras-textcnn's peak after the backward pass
#: from batch to batch. docs/accuracy/memory.md gives the grid's error with these terms, their refit
#: on its last run and the error when a family is left out of the fit.
UPDATE_WORKSPACE_FIT = {
    "sgd": (0.51, 1.00, 0.60, 0.0),
    "momentum": (0.37, 1.17, 1.04, 0.0),
    "adam": (0.62, 1.49, 0.60, 3.58),
    "adamw": (1.61, 1.67, 0.0, 0.0),
    "rmsprop": (0.27, 2.69, 1.25, 0.0),
}
#: Variable-sized temporaries of an update that read no gradient, per trainable byte, counted in Keras
#: 3.15's ``update_step``: momentum's ``m * momentum`` (Nesterov's first one too) and RMSprop's
#: ``rho * velocity``; Adam, AdamW and plain SGD have none. TensorFlow runs them as soon as the step
#: starts and each waits for its variable's gradient, so all are alive through the forward pass and go
#: as the backward pass reaches each layer (:func:`gpukit.memory.estimate.simulate`). TensorFlow's
#: profiler shows them at the peak, as many bytes as the trainable weights (VGG16 and keras-encoder with
#: momentum or RMSprop: ``benchmarks/memory_peaks.py``, docs/accuracy/memory-peaks.md).
PENDING_UPDATE_TEMPORARIES = {"momentum": 1, "rmsprop": 1}
#: The most variable-sized temporaries one variable's update keeps alive at once, counted in
#: Keras 3.15's ``update_step``: plain SGD makes one (``gradient * learning_rate``); momentum
#: three (``m * momentum``, ``gradient * learning_rate`` and their difference); Adam and AdamW
#: three (``m * alpha``, ``sqrt(v) + epsilon`` and their quotient; AdamW's decay first makes
#: two); RMSprop three (``rho * velocity``, ``square(gradient)`` scaled, their sum).
UPDATE_TEMPORARIES = {"sgd": 1, "momentum": 3, "adam": 3, "adamw": 3, "rmsprop": 3}


#: Optimizers not measured take the closest measured one's terms.
_UPDATE_LIKE = {
    "nesterov": "momentum",
    "adagrad": "rmsprop",
    "lion": "momentum",
    "adadelta": "adam",
    "adamax": "adam",
    "nadam": "adam",
}


def update_term_bounds(optimizer: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Lower and upper bounds of the four :data:`UPDATE_WORKSPACE_FIT` terms: none below zero;
    at most every float32 gradient once plus each variable's temporaries (``1 + k``, were every
    update in flight together), the largest variable's ``k`` temporaries, and the largest
    embedding's densified gradient plus its ``k``, beside the backward pass or after it (``k`` from
    :data:`UPDATE_TEMPORARIES`)."""
    k = UPDATE_TEMPORARIES[_UPDATE_LIKE.get(optimizer, optimizer)]
    return (0.0, 0.0, 0.0, 0.0), (1.0 + k, float(k), 1.0 + k, 1.0 + k)


def bounded_least_squares(a, b, low, high):
    """``x`` minimising ``|a x - b|`` with ``low <= x <= high``, exactly, for a few unknowns: every
    split of them into held at a bound or free is solved and the best feasible one kept (a box
    least-squares optimum is the unconstrained optimum over its free unknowns)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    low, high = np.asarray(low, float), np.asarray(high, float)
    n = a.shape[1]
    if n > 8:
        raise ParameterError(f"bounded_least_squares enumerates 3^n cases; {n} unknowns is too many")
    best, best_x = None, None
    for state in itertools.product((0, 1, 2), repeat=n):  # at the low bound, free, at the high bound
        s = np.array(state)
        x = np.where(s == 0, low, np.where(s == 2, high, 0.0))
        if not np.all(np.isfinite(x)):
            continue  # no unknown is held at an infinite bound (an unbounded fit: high = inf)
        free = np.flatnonzero(s == 1)
        if free.size:
            x[free] = np.linalg.lstsq(a[:, free], b - a @ x, rcond=None)[0]
        if np.any(x < low - 1e-12) or np.any(x > high + 1e-12):
            continue
        cost = float(np.sum((a @ x - b) ** 2))
        if best is None or cost < best - 1e-15:
            best, best_x = cost, x
    return best_x


def fit_update_terms(sizes, measured, step_bytes, resident_bytes, low, high, resolution: float = 0.01):
    """The four :data:`UPDATE_WORKSPACE_FIT` terms of one optimizer, least squares on the relative
    error of ``resident + max(step + share T + largest L + sparse E, after E)`` over its cases.

    ``sizes`` holds each case's (trainable bytes T, largest variable's L, largest embedding's E);
    ``step_bytes`` its forward and backward passes' peak, ``resident_bytes`` its weights, slots and
    input. The terms beside the backward pass are fitted by :func:`bounded_least_squares` on the
    cases that peak there, the one after it by a search over its (finite) range in steps of
    ``resolution``; the two alternate, from the first three alone, until neither changes (each case's
    side follows from the terms: the result is a stationary point of the piecewise fit)."""
    a = np.asarray(sizes, float)
    y, step_peak = np.asarray(measured, float), np.asarray(step_bytes, float)
    resident = np.asarray(resident_bytes, float)
    base = step_peak + resident
    emb = a[:, 2]
    if not np.isfinite(high[3]):
        raise ParameterError(
            "fit_update_terms searches the update after the backward pass over its range: "
            "give it a finite upper bound"
        )
    grid = np.arange(low[3], high[3] + resolution / 2, resolution)
    after, x = float(low[3]), None
    for _ in range(100):
        beside = base + (a @ x if x is not None else 0.0)
        peaks_beside = beside >= resident + after * emb
        if peaks_beside.sum() < a.shape[1]:  # too few cases peak beside the backward pass to fit its terms
            peaks_beside[:] = True
        k = peaks_beside
        nx = bounded_least_squares(a[k] / y[k, None], (y[k] - base[k]) / y[k], low[:3], high[:3])
        costs = [
            float(np.sum(((with_update(resident, step_peak, *a.T, (*nx, g)) - y) / y) ** 2)) for g in grid
        ]
        nafter = float(grid[int(np.argmin(costs))])
        if x is not None and np.allclose(nx, x) and nafter == after:
            break
        x, after = nx, nafter
    return (*(float(v) for v in x), after)


def pending_update_bytes(optimizer: str, trainable_bytes: int) -> int:
    """Bytes of ``optimizer``'s update temporaries that wait for the gradients of ``trainable_bytes``
    of weights (:data:`PENDING_UPDATE_TEMPORARIES`; an optimizer gpukit did not count, as the one it
    updates like)."""
    return PENDING_UPDATE_TEMPORARIES.get(_UPDATE_LIKE.get(optimizer, optimizer), 0) * trainable_bytes


def update_terms(optimizer: str) -> tuple[float, float, float, float]:
    """``optimizer``'s :data:`UPDATE_WORKSPACE_FIT` terms (an optimizer gpukit did not measure, those
    of the one it updates like)."""
    return UPDATE_WORKSPACE_FIT[_UPDATE_LIKE.get(optimizer, optimizer)]


def with_update(resident, step_peak, trainable, largest, embedding, terms):
    """A training step's peak with the optimizer's update: ``resident`` (weights, slots, input) plus the
    larger of the passes' peak with the update terms beside it and the largest embedding's update
    after it (``terms``: the four of :data:`UPDATE_WORKSPACE_FIT`; the sizes in bytes: trainable
    weights, largest variable, largest embedding table). Numbers or numpy arrays alike."""
    share, big, sparse, after = terms
    return resident + np.maximum(
        step_peak + share * trainable + big * largest + sparse * embedding, after * embedding
    )
