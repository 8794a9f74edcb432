"""derivls.server.runtime.guard: no exception of a handler reaches the client, whatever kind of function the
handler is (pygls runs plain functions, coroutines and generators, each its own way)."""

from __future__ import annotations

import asyncio
import inspect

from derivls.server.runtime.guard import guarded


def _drive(gen, answers=()):
    """Run a handler's generator as pygls does: send it the answer to each thing it yields."""
    answers = iter(answers)
    try:
        gen.send(None)
        while True:
            gen.send(next(answers))
    except StopIteration as done:
        return done.value


def test_a_generator_handler_stays_a_generator_so_pygls_answers_it_at_once_in_order():
    @guarded()
    def handler(x):
        if x == "yield":
            return (yield "run this", (), {})
        return x * 2

    assert inspect.isgeneratorfunction(handler)
    assert _drive(handler(21)) == 42  # answered without yielding: in the order of the requests
    assert _drive(handler("yield"), ["its answer"]) == "its answer"


def test_a_generator_handler_that_raises_answers_the_default():
    @guarded(default=[])
    def handler():
        yield "run this", (), {}
        raise ValueError("broken")

    assert _drive(handler(), ["answer"]) == []


def test_a_coroutine_and_a_plain_handler_that_raise_answer_the_default():
    @guarded(default="none")
    async def coroutine():
        raise ValueError("broken")

    @guarded(default="none")
    def plain():
        raise ValueError("broken")

    assert asyncio.run(coroutine()) == "none"
    assert plain() == "none"
