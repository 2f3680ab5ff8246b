"""What every contract model is built from: the strict pydantic base (``StrictModel``: unknown
keys are errors, models are frozen, numbers finite and within bounds, dates within ``YEARS``, a
yes/no never read as a number) and the ``FieldError`` the models' validators raise."""

from __future__ import annotations

import datetime as dt
import typing
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator


class FieldError(ValueError):
    """A rule broken at ``path`` below the model that raised it: a cross-field rule, or
    (``cross_field=False``) a value of the wrong kind that pydantic would have coerced.

    pydantic keeps the exception in the error's context, so the loader can point at the exact
    YAML node (e.g. ``regions.failover[1]``) rather than at the parent mapping.
    """

    def __init__(
        self, path: tuple[str | int, ...], message: str, *, cross_field: bool = True
    ) -> None:
        super().__init__(message)
        self.path = path
        self.cross_field = cross_field


def as_written(figure: float) -> Fraction:
    """A contract's figure as its text writes it (``4.6`` is 23/5, not the double nearest it),
    for arithmetic whose result must land exactly on a limit or a cent."""
    return Fraction(repr(float(figure)))


class StrictModel(BaseModel):
    """Strict base: unknown keys are errors (with a "did you mean"), models are frozen, numbers
    are finite, and a yes/no is never read as a number (YAML's `true` is not 1 ms)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, use_enum_values=False, allow_inf_nan=False
    )

    @model_validator(mode="before")
    @classmethod
    def _no_bool_as_number(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                field = cls.model_fields.get(key) if isinstance(key, str) else None
                if isinstance(value, bool) and field and not _admits_bool(field.annotation):
                    raise FieldError(
                        (key,),
                        f"{str(value).lower()} is a yes/no, not a value for this field",
                        cross_field=False,
                    )
        return data

    @field_validator("*", mode="after")
    @classmethod
    def _sane(cls, value: Any) -> Any:
        for item in value if isinstance(value, list) else (value,):
            _check_sane(item)
        return value


#: Contract numbers beyond these validate in Python and break later in a 64-bit engine, a
#: ``timedelta`` or a float division; no signed SLA needs them.
_MAX_NUMBER = 10**12


_MIN_FRACTION = 1e-6


#: Years a contract date may fall in: the calendars slacheck builds windows from.
YEARS = (1970, 2199)


def _check_sane(value: Any) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float) and abs(value) > _MAX_NUMBER:
        raise ValueError(f"{value:g} is beyond any contract figure (at most {_MAX_NUMBER:,})")
    if isinstance(value, float) and value != 0 and abs(value) < _MIN_FRACTION:
        raise ValueError(f"{value:g} is too small to mean anything (at least {_MIN_FRACTION:g})")
    if isinstance(value, dt.date) and not YEARS[0] <= value.year <= YEARS[1]:
        raise ValueError(f"year {value.year} is outside {YEARS[0]}–{YEARS[1]}")


def _admits_bool(annotation: Any) -> bool:
    if annotation is bool:
        return True
    return any(_admits_bool(a) for a in typing.get_args(annotation))
