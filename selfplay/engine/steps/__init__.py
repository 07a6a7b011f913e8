"""The steps of a self-play round and of a `selfplay loop` iteration, one module per step.

A step is a `name` (its key in the bank's step journal) and `run(ctx) -> dict` (its report);
`selfplay.engine.runner` runs a list of them. A round's default list is
`selfplay.engine.rounds.round_steps`, an iteration's `selfplay.engine.loop.iteration_steps`;
`SelfPlay(steps=...)` and `Loop(steps=...)` take another.
"""
