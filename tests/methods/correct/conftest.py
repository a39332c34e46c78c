import pytest

from methods.correct import Step, Trajectory


def make_traj(
    tid="t1",
    n=6,
    agents=("Planner", "Solver", "Verifier"),
    mistake_step=2,
    text="x",
    question="What is 2+2?",
):
    steps = tuple(
        Step(i, agents[i % len(agents)], agents[i % len(agents)], f"{text} turn {i}")
        for i in range(n)
    )
    return Trajectory(
        id=tid,
        question=question,
        steps=steps,
        ground_truth="4",
        mistake_agent=steps[mistake_step].agent,
        mistake_step=mistake_step,
        mistake_reason=f"reason of {tid}",
    )


@pytest.fixture
def traj():
    return make_traj()
