"""Exclusions: what does not count against the vendor in any term (maintenance windows, long
inputs, downgraded service tiers, customer-caused errors)."""

from __future__ import annotations

import datetime as dt
from typing import Literal, Self

from pydantic import Field, model_validator

from slacheck.contract.base import FieldError, StrictModel


class MaintenanceWindow(StrictModel):
    """Either one interval (`start`, `end`) or a weekly recurrence (`weekly`)."""

    start: dt.datetime | None = Field(
        default=None, description="Start of a one-off window (contract time zone if naive)."
    )
    end: dt.datetime | None = Field(default=None, description="End of a one-off window.")
    weekly: WeeklyRecurrence | None = Field(default=None, description="A weekly recurring window.")

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        interval = self.start is not None or self.end is not None
        if interval == (self.weekly is not None):
            raise FieldError((), "give either start and end, or weekly, for a maintenance window")
        if interval and (self.start is None or self.end is None):
            raise FieldError((), "a one-off maintenance window needs both start and end")
        if (
            self.start is not None
            and self.end is not None
            and (self.start.tzinfo is None) != (self.end.tzinfo is None)
        ):
            raise FieldError(
                ("end",), "give both start and end with a UTC offset, or neither (contract zone)"
            )
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise FieldError(("end",), "maintenance window end is not after its start")
        return self


class WeeklyRecurrence(StrictModel):
    days: list[Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]] = Field(
        min_length=1, description="Days of the week, e.g. [sun]."
    )
    start: dt.time = Field(description="Local start time (contract time zone), e.g. 02:00.")
    duration_minutes: int = Field(gt=0, le=1440, description="Length of each window.")


MaintenanceWindow.model_rebuild()


class Exclusions(StrictModel):
    maintenance: list[MaintenanceWindow] = Field(
        default_factory=list, description="Maintenance windows: calls in them are excluded."
    )
    max_input_tokens: int | None = Field(
        default=None, gt=0, description="Requests with more input tokens are excluded."
    )
    downgraded_service_tiers: list[str] = Field(
        default_factory=list,
        description="Calls served on these tiers (e.g. `flex`) are excluded.",
    )
    customer_errors: bool = Field(
        default=True,
        description="Customer-caused errors are excluded: status class `customer_error` (HTTP "
        "4xx other than 429, or an SDK exception class that means one, such as "
        "`openai.NotFoundError`).",
    )
