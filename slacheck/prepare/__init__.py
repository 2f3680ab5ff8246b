"""The prepare stage, between evaluation and rendering: from the contract, the metering run and
the evaluation, the frozen inputs each document and the claim pack need (traffic, evidence
rows, distributions, incidents). It is the only caller of the metering run outside the checks;
the renderers (``slacheck.render``) take only what it returns and format it."""

from __future__ import annotations

from slacheck.prepare.accept import prepare_accept
from slacheck.prepare.claim import prepare_claim
from slacheck.prepare.fields import metering_run, no_window, prepare_fields
from slacheck.prepare.report import prepare_report

__all__ = [
    "metering_run",
    "no_window",
    "prepare_accept",
    "prepare_claim",
    "prepare_fields",
    "prepare_report",
]
