"""The implementation exercises, one module per chapter; :data:`EXERCISES` maps each name to its definition."""

from ..engine import Exercise
from . import ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11, ch13, ch14, ch15

__all__ = ["EXERCISES"]

#: Exercise name -> its :class:`~posenc.course.engine.Exercise`, in the book's order.
EXERCISES: dict[str, Exercise] = {
    exercise.name: exercise
    for exercise in (
        ch01.EXERCISE,
        ch02.EXERCISE,
        ch03.EXERCISE,
        ch04.EXERCISE,
        ch05.EXERCISE,
        ch06.EXERCISE,
        ch07.EXERCISE,
        ch08.EXERCISE,
        ch09.EXERCISE,
        ch10.EXERCISE,
        ch11.RAMP,
        ch11.TEMPERATURE,
        ch13.ROPE_HALF,
        ch13.PERMUTE_FOR_HALF,
        ch14.EXERCISE,
        ch15.INTERPOLATE,
    )
}
