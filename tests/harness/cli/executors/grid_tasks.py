"""Two small tasks with different parameters, for the grid's planning tests."""

from typing import Literal

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def sized(n: int = 2) -> Task:
    """n arithmetic questions."""
    if n < 0:
        raise ValueError(f"sized: n={n} must not be negative")
    samples = [Sample(input=f"What is {i} + 1?", target=str(i + 1)) for i in range(n)]
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=includes())


@task
def moded(mode: Literal["x", "y"] = "x") -> Task:
    """One question whose wording depends on `mode`."""
    return Task(
        dataset=MemoryDataset([Sample(input=f"Say {mode}.", target=mode)]),
        solver=generate(),
        scorer=includes(),
    )
