"""`Clock`: the moment a translation is made as of, and what was decided with it.

Translation never reads a clock (the same input gives the same output): the time is an
input (`Options.now`). Code that compares against it asks `clock.passed(instant)`, and a
clock made with `recording=True` remembers each answer, so that a cached result can be
reused at another time exactly when every such answer would be the same then (a
certificate that was valid and still is).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Clock:
    #: Unix seconds; None checks nothing against time (never `passed`).
    now: float | None = None
    #: (instant, answer) of each `passed` question, when recording.
    answers: list[tuple[float, bool]] | None = field(default=None)

    @classmethod
    def recording(cls, now: float | None) -> Clock:
        return cls(now, [])

    def passed(self, instant: float) -> bool:
        """True when `instant` is before now."""
        answer = self.now is not None and instant < self.now
        if self.answers is not None:
            self.answers.append((instant, answer))
        return answer


def same_answers(answers: list[tuple[float, bool]], now: float | None) -> bool:
    """Whether a clock at `now` answers each recorded question as it was answered."""
    return all((now is not None and instant < now) == answer for instant, answer in answers)
