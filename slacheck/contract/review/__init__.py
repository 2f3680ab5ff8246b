"""The clause review behind `slacheck lint`: registered rules that flag weak or unstated clauses.

Laid out as sqlfluff lays out its rules: ``core`` holds a finding, its severity and the
registry (``rule``, ``review``); each other module is one group of rules with the messages
that word them, registered when this package is imported. Codes group by clause:

===============  =========================================================================
``latency``      SLA101–SLA105, SLA501: the measurement point and how a figure is computed
``regions``      SLA201–SLA206: regions, residency and cross-region routing
``peak``         SLA301–SLA303: peak load, its degradation, and the fallback model's scope
``ratelimit``    SLA401–SLA403: the rate limit and what it admits in agent tasks
``timezone``     SLA502, SLA505: the time zone, and maintenance inside business hours
``windows``      SLA503, SLA504: rolling windows and minimum samples
``readings``     SLA506: judgement calls the contract leaves to the reader
``credits``      SLA601–SLA604: the availability target and its credits
``exclusions``   SLA605–SLA607: excluded calls and failures that do not count
``definitions``  SLA701–SLA707: timeout, notices and claims, remedy, precedence, undecided
                 verdicts, an ex-post peak, the rate-limit clock
===============  =========================================================================

``wording`` holds what several groups quote (steps per task, durations). ``Says`` reads every
group's messages by name, as the single message class before the split did.
"""

from __future__ import annotations

from slacheck.contract.review import (
    credits,
    definitions,
    exclusions,
    latency,
    peak,
    ratelimit,
    readings,
    regions,
    timezone,
    windows,
    wording,
)
from slacheck.contract.review.core import RULES, Finding, Hit, Rule, Severity, review, rule
from slacheck.messages import CodeIndex

__all__ = ["RULES", "Finding", "Hit", "Rule", "Says", "Severity", "review", "rule"]

#: every review message by member name (``Says.SLA101_WHY``), whichever group declares it
Says = CodeIndex(
    wording.Wording,
    latency.LatencySays,
    regions.RegionSays,
    peak.PeakSays,
    ratelimit.RateLimitSays,
    timezone.TimeZoneSays,
    windows.WindowSays,
    readings.ReadingSays,
    credits.CreditSays,
    exclusions.ExclusionSays,
    definitions.DefinitionSays,
)
