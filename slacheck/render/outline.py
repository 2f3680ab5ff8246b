"""The clause draft's outline: which sections and clauses the contract backs, and their numbers.

The draft states only what the contract says: a clause whose value the contract leaves open is
not drafted (its gap is a finding of the review memo), and the clauses left are numbered
without gaps. One outline decides both, so the draft's clause numbers, its cross-references
("as clause 6.2 defines") and the review memo's "concerns clause …" always agree.

Numbers are language-neutral here (section 2, clause "2.1"); ``Numbering`` words them per
language: "2." and "clause 6.2" in English, 第二条 and 第 6.2 条 in Chinese.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from slacheck.contract.model import Contract, RateLimitBasis

__all__ = ["ClauseRef", "Numbering", "Outline", "Section", "draft_outline"]


@dataclass(frozen=True, slots=True)
class Section:
    """One numbered section of the draft and the keys of its clauses, in order."""

    key: str
    number: int
    clauses: tuple[str, ...]

    def clause_number(self, key: str) -> str | None:
        if key not in self.clauses:
            return None
        return f"{self.number}.{self.clauses.index(key) + 1}"


@dataclass(frozen=True, slots=True)
class ClauseRef:
    """Where a review finding sits in the draft: a clause ("2.1"); a section that is one clause
    (the exclusions list); a section without a clause on the point, because the contract
    leaves it open (``drafted`` False); or no section at all (``section`` None)."""

    section_key: str
    section: int | None
    clause: str | None
    drafted: bool
    term_id: str | None = None  # the latency term a clause 2.x states


#: the draft's sections, in order; a section with no clause is left out and the rest renumber
SECTION_KEYS = ("general", "point", "regions", "peak", "rate_limit", "availability", "exclusions")


@dataclass(frozen=True, slots=True)
class Outline:
    """The sections the draft holds, numbered 1, 2, … in order, each with its clauses."""

    sections: tuple[Section, ...]
    latency_ids: tuple[str, ...]

    def _section(self, key: str) -> Section | None:
        return next((s for s in self.sections if s.key == key), None)

    def has(self, key: str) -> bool:
        """Whether the draft holds a section (``"peak"``) or a clause (``"peak.definition"``)."""
        section, _, clause = key.partition(".")
        s = self._section(section)
        return s is not None and (not clause or key in s.clauses)

    def number(self, key: str) -> str:
        """A section's number ("4") or a clause's ("6.2"); a key the draft lacks is an error,
        so no template can cite a clause that is not there."""
        section, _, clause = key.partition(".")
        s = self._section(section)
        if s is None or (clause and key not in s.clauses):
            raise KeyError(f"the draft has no clause {key!r}")
        return str(s.number) if not clause else str(s.clause_number(key))

    def term_clause(self, index: int) -> str:
        return f"point.{self.latency_ids[index]}" if index < len(self.latency_ids) else "point"

    def locate(self, field: Sequence[str | int]) -> ClauseRef:
        """The clause (or section) of the draft a contract field belongs to."""
        key, term = _clause_of(tuple(field), self)
        section_key = key.partition(".")[0]
        s = self._section(section_key)
        if s is None:
            return ClauseRef(section_key, None, None, False, term)
        if "." not in key:  # the section as a whole states it
            return ClauseRef(section_key, s.number, None, True, term)
        clause = s.clause_number(key)
        return ClauseRef(section_key, s.number, clause, clause is not None, term)


def _clause_of(field: tuple[str | int, ...], outline: Outline) -> tuple[str, str | None]:
    """A field's clause key (``"rate_limit.equivalent"``), or a section key when the field
    concerns the section as a whole; the latency term id for a field under ``latency[i]``."""
    head = str(field[0]) if field else ""
    rest = field[1:]
    sub = str(rest[0]) if rest else ""
    if head == "latency":
        if rest and isinstance(rest[0], int):
            index = rest[0]
            term = outline.latency_ids[index] if index < len(outline.latency_ids) else None
            return outline.term_clause(index), term
        return "point", None
    if head == "contract":
        return ("general.time_zone" if sub == "time_zone" else "general"), None
    if head == "scope":
        return "general.scope", None
    if head == "readings":
        return _READINGS.get(sub, "general.reading"), None
    if head == "regions":
        return ("regions.residency" if sub == "residency" else "regions.primary"), None
    if head == "routing":
        return "regions.routing", None
    if head == "peak":
        return ("peak.degradation" if sub == "degradation" else "peak.definition"), None
    if head == "rate_limit":
        return ("rate_limit.equivalent" if sub == "steps_per_task" else "rate_limit.limit"), None
    if head == "availability":
        failures = sub == "failures" or sub == "min_samples"
        return ("availability.failures" if failures else "availability.target"), None
    if head == "credits":
        if sub in ("claim_deadline_days", "cap_percent"):
            return "availability.deadline", None
        return "availability.credits", None
    if head == "exclusions":
        return "exclusions", None
    return "general", None


#: the section a judgement call (``readings.<name>``) bears on; the draft states a reading
#: only when the contract does, so an unstated one is a point of the section with no clause
_READINGS = {
    "model_scope": "general.reading",
    "at_the_limit": "point.reading",
    "per_task_rate_counts": "rate_limit.reading",
    "excluded_calls_in_task_terms": "exclusions.reading",
}


def draft_outline(contract: Contract) -> Outline:
    """Which clauses the contract backs. A clause is listed only when every value it states is
    a contract field; a section with none is left out."""
    c = contract.contract
    sections: list[tuple[str, list[str]]] = []

    general = ["general.parties"]
    if c.time_zone:
        general.append("general.time_zone")
    general += ["general.scope", "general.definitions", "general.language"]
    # the readings the contract states, as a clause (the others are a note, not a clause)
    if contract.readings.model_fields_set:
        general.append("general.readings")
    # sole remedy and the order of precedence, where the contract states them
    if (contract.credits is not None and contract.credits.sole_remedy is not None) or (
        contract.precedence
    ):
        general.append("general.remedies")
    sections.append(("general", general))

    sections.append(("point", [f"point.{t.id}" for t in contract.latency]))

    if contract.regions is not None:
        regions = ["regions.primary"]
        if contract.regions.residency is not None:
            regions.append("regions.residency")
        if contract.routing is not None:
            regions.append("regions.routing")
        sections.append(("regions", regions))

    if contract.peak is not None:
        peak = ["peak.definition"]
        if contract.peak.degradation is not None:
            peak.append("peak.degradation")
        sections.append(("peak", peak))

    rl = contract.rate_limit
    if rl is not None:
        rate = ["rate_limit.limit"]
        # restated per task (or per request) only at the contract's own steps per task
        if rl.basis is not RateLimitBasis.PER_TOKEN and rl.steps_per_task is not None:
            rate.append("rate_limit.equivalent")
        a = contract.availability
        if a is not None and a.failures.throttling_below_limit:
            rate.append("rate_limit.throttling")
        sections.append(("rate_limit", rate))

    a, cr = contract.availability, contract.credits
    if a is not None or cr is not None:
        avail: list[str] = []
        if a is not None:
            avail += ["availability.target", "availability.failures"]
        if cr is not None:
            avail.append("availability.credits")
            if cr.claim_deadline_days or cr.cap_percent:
                avail.append("availability.deadline")
            avail += ["availability.claims", "availability.remedies"]
        sections.append(("availability", avail))

    sections.append(("exclusions", []))  # always stated: a list, or that no call is excluded

    kept = [(k, cl) for k, cl in sections if cl or k == "exclusions"]
    return Outline(
        tuple(Section(k, n, tuple(cl)) for n, (k, cl) in enumerate(kept, start=1)),
        tuple(t.id for t in contract.latency),
    )


_DIGITS = "零一二三四五六七八九"


def chinese_numeral(n: int) -> str:
    """1 → 一, 10 → 十, 12 → 十二, 20 → 二十, 23 → 二十三 (the draft numbers its sections so)."""
    if n < 10:
        return _DIGITS[n]
    tens, ones = divmod(n, 10)
    head = "" if tens == 1 else _DIGITS[tens]
    return head + "十" + (_DIGITS[ones] if ones else "")


@dataclass(frozen=True, slots=True)
class Numbering:
    """The outline's numbers worded in one language, for the templates."""

    outline: Outline
    lang: str

    def has(self, key: str) -> bool:
        return self.outline.has(key)

    def no(self, key: str) -> str:
        """A clause's label: "6.2" in every language."""
        return self.outline.number(key)

    def heading(self, key: str) -> str:
        """A section heading's number: "2. " in English, "第二条　" in Chinese."""
        n = int(self.outline.number(key))
        return f"第{chinese_numeral(n)}条\u3000" if self.lang == "zh" else f"{n}. "

    def ref(self, key: str) -> str:
        """A cross-reference: "6.2" or "4" in English (the sentence says "clause"),
        "第 6.2 条" or "第四条" in Chinese."""
        number = self.outline.number(key)
        if self.lang != "zh":
            return number
        if "." in number:
            return f"第 {number} 条"
        return f"第{chinese_numeral(int(number))}条"

    def where(self, ref: ClauseRef) -> str:
        """A finding's place in the memo's table: the clause ("2.1" / "第 2.1 条"), the section
        that is one clause ("7" / "第七条"), the section in parentheses when the draft holds no
        clause on the point ("(1)" / "（第一条）"), or "—" when it holds no section either."""
        if ref.section is None:
            return "—"
        if ref.clause is not None:
            return f"第 {ref.clause} 条" if self.lang == "zh" else ref.clause
        section = f"第{chinese_numeral(ref.section)}条" if self.lang == "zh" else str(ref.section)
        if ref.drafted:
            return section
        return f"（{section}）" if self.lang == "zh" else f"({section})"

    def clause_ref(self, ref: ClauseRef) -> str:
        """A finding's clause or section as the memo's sentence cites it: "2.1" / "第 2.1 条"."""
        if ref.clause is not None:
            return f"第 {ref.clause} 条" if self.lang == "zh" else ref.clause
        if ref.section is None:
            return ""
        return f"第{chinese_numeral(ref.section)}条" if self.lang == "zh" else str(ref.section)

    def locate(self, field: Sequence[str | int]) -> ClauseRef:
        return self.outline.locate(field)
