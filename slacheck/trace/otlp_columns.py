"""The canonical columns of OTLP spans in the engine: the parsed lines unnested to one row per
span (``unnest_spans``), the ``otlp`` rows of the conventions table applied to its attributes
(``canonical``), then stream logs ending their calls and the task rule (``with_tasks``). The same
table drives the Python reader (``otlp.read_otlp``): the two give the same rows."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir

from slacheck.engine import Engine
from slacheck.trace.conventions import DERIVED_PROVIDER, FieldRule, KindRule, table
from slacheck.trace.normalise import host_expr, stripped_expr
from slacheck.trace.otlp_values import (
    Nanos,
    Spelling,
    Value,
    as_bool,
    as_float,
    as_int,
    first_token_us,
    json_get,
    nanos,
    nanos_us,
    otlp_id,
    scalar_text,
    spelling,
    value_of,
)
from slacheck.trace.records import (
    FIRST_TOKEN_END,
    STREAM_LOG_END,
    STREAM_LOG_FIELDS,
    USAGE_SPELLINGS,
)
from slacheck.trace.schema import BY_NAME, COLUMNS, Kind, SetAside, Status
from slacheck.trace.status import Findings, findings_expr

# -- unnesting ----------------------------------------------------------------------------------

_SCOPE_KEYS = ("scopeSpans", "instrumentationLibrarySpans")


def unnest_spans(lines: ir.Table) -> ir.Table:
    """One row per span: its file, reference, raw fields and its attributes (resource, scope
    and span, in that order, so the span's own win as in the Python reader)."""
    lines = lines.filter(lines.ok)

    # each level's index is written into its list before it is unnested, and every unnest is in
    # a select list: an unnest with an offset compiles to a lateral join, which DuckDB runs by
    # holding the whole left side (every parsed line) in memory
    def scopes(x: ir.StructValue) -> ir.ArrayValue:
        """Both scope lists of a resource in one, each entry tagged with its key and index."""
        listed = [
            x[key].map(
                lambda y, j, key=key: ibis.struct(
                    {
                        "scope_key": ibis.literal(key),
                        "j": j.cast("int64"),
                        "scope": y.scope.attributes,
                        "spans": y.spans,
                    }
                )
            )
            for key in _SCOPE_KEYS
        ]
        empty = ibis.literal([], type=listed[0].type())
        return listed[0].fill_null(empty).concat(listed[1].fill_null(empty))

    rs = lines.doc.resourceSpans.map(
        lambda x, i: ibis.struct(
            {"i": i.cast("int64"), "res": x.resource.attributes, "ss": scopes(x)}
        )
    )
    r = lines.select("source_file", "line", rs=rs.unnest())
    s = r.select("source_file", "line", i=r.rs.i, res=r.rs.res, ss=r.rs.ss.unnest())
    sp = s.ss.spans.map(lambda z, k: ibis.struct({"k": k.cast("int64"), "span": z}))
    s = s.select(
        "source_file",
        "line",
        "i",
        "res",
        j=s.ss.j,
        scope_key=s.ss.scope_key,
        scope=s.ss.scope,
        sp=sp.unnest(),
    )
    s = s.mutate(k=s.sp.k, sp=s.sp.span)
    ref = (
        ibis.literal("line ")
        + s.line.cast("string")
        + ": resourceSpans["
        + s.i.cast("string")
        + "]."
        + s.scope_key
        + "["
        + s.j.cast("string")
        + "].spans["
        + s.k.cast("string")
        + "]"
    )
    empty = ibis.literal([], type=dt.Array(s.res.type().value_type))
    attrs = s.res.fill_null(empty).concat(
        s.scope.fill_null(empty), s.sp.attributes.fill_null(empty)
    )
    exception_type, exception_message = _exception_event(s.sp.events)
    return s.select(
        source_file=s.source_file,
        source_ref=ref,
        trace_id=s.sp.traceId,
        span_id=s.sp.spanId,
        parent_id=s.sp.parentSpanId,
        name=s.sp["name"],
        start=s.sp.startTimeUnixNano,
        end=s.sp.endTimeUnixNano,
        code=s.sp.status.code,
        message=s.sp.status.message,
        exception_type=exception_type,
        exception_message=exception_message,
        attrs=attrs,
        events=s.sp.events,
    )


def _exception_event(events: ir.ArrayValue) -> tuple[ir.StringValue, ir.StringValue]:
    """``otlp.exception_event`` in the engine: the type and message of the span's last
    ``exception`` event, null when not recorded."""
    exc = events.filter(lambda e: e["name"] == "exception")
    n = exc.length().fill_null(0)
    last = ibis.ifelse(n > 0, exc[n - 1], ibis.null(exc.type().value_type))

    def attribute(key: str) -> ir.StringValue:
        found = last.attributes.filter(lambda a: a.key == key)
        m = found.length().fill_null(0)
        value = ibis.ifelse(
            m > 0, found[m - 1].value, ibis.null(found.type().value_type.fields["value"])
        )
        return scalar_text(value)  # as written (the Python reader's as_text)

    return attribute("exception.type"), attribute("exception.message")


# -- the conventions' field rules ---------------------------------------------------------------


def _normalised(rule: FieldRule, v: Value, engine: Engine) -> tuple[Value, ir.BooleanValue]:
    """``conventions.normalised``: the value after the rule's normaliser, and whether the
    source counts as present (a normaliser that finds nothing makes it absent)."""
    yes: ir.BooleanValue = ibis.literal(True)
    if rule.normalise is None:
        return v, yes
    conv = table()
    if rule.normalise == "host":
        host = host_expr(v.text, conv.placeholders)
        return dataclasses.replace(v, text=host), host.notnull()
    if rule.normalise == "provider":
        framework = v.text.notnull() & v.text.lower().isin(list(conv.frameworks))
        return v, ~framework.fill_null(False)
    # usage: an object in a JSON string (a kvlistValue is not read by the engine)
    obj = ibis.ifelse(
        (v.variant == "string").fill_null(False) & v.text.startswith("{").fill_null(False),
        v.text,
        ibis.null(dt.string),
    )
    ats: list[ir.StringValue] = []
    for path in USAGE_SPELLINGS[rule.field]:
        ats.append(json_get(obj, [path], engine))  # a flat key first, as records.lookup
        if "." in path:
            ats.append(json_get(obj, path.split("."), engine))
    count = ibis.coalesce(*ats)
    found = count.notnull()
    return dataclasses.replace(v, text=count, is_array=ibis.literal(False)), found


@dataclass(frozen=True)
class _Read:
    """One field rule applied: its converted value (null when unparseable) and whether it
    could not be converted."""

    value: ir.Value
    bad: ir.BooleanValue


_TO_MS = {"s": 1000.0, "ms": 1.0, "us": 0.001, "ns": 0.000001}


def _number_text(rule: FieldRule, v: Value) -> ir.StringValue | None:
    """The text ``_convert`` (and a timestamp rule's ``first_token_us``) reads as a number,
    or None for a rule that reads none."""
    if rule.unit == "timestamp":
        return v.text
    import pyarrow as pa

    typ = BY_NAME[rule.field].type
    if pa.types.is_floating(typ):
        return ibis.ifelse(v.is_array, v.first, v.text)
    if pa.types.is_integer(typ):
        return v.text
    return None


def _convert(rule: FieldRule, v: Value, spelled: Spelling | None = None) -> _Read:
    """``conventions._converter`` in the engine; ``bad`` where Python raises ``Unparseable``.
    ``spelled``: the ``Spelling`` of ``_number_text(rule, v)``, as a stage's columns."""
    column = BY_NAME[rule.field]
    typ = column.type
    if rule.unit == "timestamp":  # the first token's arrival; checked with the timestamps
        return _Read(v.text, ibis.literal(False))
    import pyarrow as pa

    if pa.types.is_floating(typ):
        text = ibis.ifelse(v.is_array, v.first, v.text)
        num = as_float(text, spelled)
        value = num * _TO_MS[rule.unit or "ms"]
        return _Read(value, num.isnull())
    if pa.types.is_integer(typ):
        num = as_int(v.text, spelled)
        return _Read(num + rule.offset if rule.offset else num, num.isnull())
    if pa.types.is_boolean(typ):
        flag = as_bool(v.text)
        return _Read(flag, flag.isnull())
    return _Read(v.text, ibis.literal(False))


# -- the canonical table ------------------------------------------------------------------------


def _keys(kinds: Sequence[KindRule], fields: Sequence[FieldRule]) -> list[str]:
    logs = [a for r in table().stream_logs for a in (r.attribute, r.duration)]
    named = [r.attribute for r in kinds] + [r.attribute for r in fields if r.attribute] + logs
    return list(dict.fromkeys(named))


def canonical(
    s: ir.Table, engine: Engine, barrier: Callable[[ir.Table], ir.Table] = lambda t: t
) -> ir.Table:
    """The canonical columns of unnested spans, as ``otlp._add_span`` and ``SpanRows`` make
    them, driven by the ``otlp`` rows of the conventions table; ``with_tasks`` then marks the
    tasks."""
    conv = table()
    kinds, fields = conv.rows_for("otlp")
    keys = _keys(kinds, fields)
    events = list(dict.fromkeys(r.event for r in fields if r.event is not None))
    col = {k: f"_a{i}" for i, k in enumerate(keys)}
    ecol = {e: f"_e{i}" for i, e in enumerate(events)}
    # the last attribute of each name (span over scope over resource, later over earlier), and
    # the first event of each name
    s = barrier(s)
    found = barrier(
        s.mutate(
            **{col[k]: s.attrs.filter(lambda a, k=k: a.key == k) for k in keys},
            **{ecol[e]: s.events.filter(lambda x, e=e: x["name"] == e) for e in events},
        )
    )
    found = found.mutate(
        **{
            col[k]: ibis.ifelse(
                found[col[k]].length() > 0,
                found[col[k]][found[col[k]].length() - 1].value,
                ibis.null(found[col[k]].type().value_type.fields["value"]),
            )
            for k in keys
        },
        **{
            ecol[e]: ibis.ifelse(
                found[ecol[e]].length() > 0,
                found[ecol[e]][0].timeUnixNano,
                ibis.null(dt.string),
            )
            for e in events
        },
    ).drop("attrs", "events")
    # each stage is computed once: ``barrier`` makes it a view, so the next stage refers to its
    # columns instead of repeating its expressions at every use (a query of megabytes otherwise)
    found = barrier(found)
    parts: dict[str, ir.Value] = {}
    for k in keys:
        v = value_of(found[col[k]], engine)
        parts |= {f"{col[k]}_{part}": getattr(v, part) for part in Value.__dataclass_fields__}
    flat = barrier(found.mutate(**parts).drop(*col.values()))
    values = {
        k: Value(**{part: flat[f"{col[k]}_{part}"] for part in Value.__dataclass_fields__})
        for k in keys
    }
    found = flat

    out: dict[str, ir.Value] = {}
    defects: list[ir.StringValue] = []
    ft_us: ir.IntegerValue = ibis.null(dt.int64)
    ft_bad: ir.BooleanValue = ibis.literal(False)
    by_field: dict[str, list[FieldRule]] = {}
    for rule in fields:
        by_field.setdefault(rule.field, []).append(rule)
    # each rule's value after its normaliser, and whether its source counts as present
    reads: dict[int, _Read] = {}
    usable: dict[int, ir.BooleanValue] = {}
    stamps: dict[int, tuple[ir.IntegerValue, ir.BooleanValue]] = {}
    # the normalised values are a stage of their own (one column each), so the conversions
    # below refer to them instead of repeating the JSON and host expressions
    normal: dict[str, ir.Value] = {}
    for i, rule in enumerate(fields):
        if rule.normalise is not None:
            v, ok = _normalised(rule, values[rule.attribute], engine)
            normal |= {f"_n{i}_text": v.text, f"_n{i}_ok": v.present & ok}

    def read_back(t: ir.Table) -> dict[str, Value]:
        """The attributes' values as ``t``'s columns (after a stage: its columns, not the
        expressions behind them)."""
        return {
            k: Value(**{part: t[f"{col[k]}_{part}"] for part in Value.__dataclass_fields__})
            for k in keys
        }

    if normal:
        found = barrier(found.mutate(**normal))
        values = read_back(found)

    def rule_value(i: int, rule: FieldRule) -> Value:
        """The ``i``-th rule's value, after its normaliser."""
        v = values[rule.attribute]
        if rule.normalise is not None:
            v = dataclasses.replace(v, text=found[f"_n{i}_text"])
            if rule.normalise == "usage":
                v = dataclasses.replace(v, is_array=ibis.literal(False))
        return v

    # how every text read as a number or a timestamp is spelled (``Spelling``) is a stage of
    # its own: each read refers to the spelling several times, and inlined, its regular
    # expressions made each timestamp's read tens of kilobytes of SQL
    numeric: dict[str, ir.StringValue] = {"start": found.start, "end": found.end}
    for e in events:
        numeric[ecol[e]] = found[ecol[e]]
    for i, rule in enumerate(fields):
        if rule.event is None:
            text = _number_text(rule, rule_value(i, rule))
            if text is not None:
                numeric[f"r{i}"] = text
    parts_of = Spelling.__dataclass_fields__

    def spellings(t: ir.Table) -> dict[str, Spelling]:
        """How each number's text is spelled, as ``t``'s columns."""
        return {
            name: Spelling(**{part: t[f"_sp_{name}_{part}"] for part in parts_of})
            for name in numeric
        }

    found = barrier(
        found.mutate(
            **{
                f"_sp_{name}_{part}": getattr(spelling(text), part)
                for name, text in numeric.items()
                for part in parts_of
            }
        )
    )
    values = read_back(found)
    spelled = spellings(found)
    # and the timestamps' numbers of nanoseconds, from their spelling, one more
    stamped = ["start", "end", *ecol.values()]
    stamped += [
        f"r{i}" for i, rule in enumerate(fields) if rule.event is None and rule.unit == "timestamp"
    ]
    found = barrier(
        found.mutate(
            **{
                f"_ns_{name}_{part}": getattr(nanos(numeric[name], spelled[name]), part)
                for name in stamped
                for part in Nanos.__dataclass_fields__
            }
        )
    )
    values = read_back(found)
    spelled = spellings(found)
    ns = {
        name: Nanos(**{part: found[f"_ns_{name}_{part}"] for part in Nanos.__dataclass_fields__})
        for name in stamped
    }
    for i, rule in enumerate(fields):
        if rule.event is not None:
            raw = found[ecol[rule.event]]
            us, bad = nanos_us(raw, engine, ns[ecol[rule.event]])
            text = stripped_expr(raw)
            unset = raw.isnull() | (text == "") | text.re_search(r"^0+$").fill_null(False)
            stamps[id(rule)] = (us, bad)
            usable[id(rule)] = ~unset
            reads[id(rule)] = _Read(ibis.null(dt.string), ibis.literal(False))
            continue
        v = rule_value(i, rule)
        if rule.normalise is not None:
            usable[id(rule)] = found[f"_n{i}_ok"]
        else:
            usable[id(rule)] = v.present
        reads[id(rule)] = _convert(rule, v, spelled.get(f"r{i}"))
        if rule.unit == "timestamp":
            stamps[id(rule)] = first_token_us(v.text, v.variant, engine, ns[f"r{i}"])
    # each field: the first rule whose source is present; defects in the order of the rules
    winners: dict[int, ir.BooleanValue] = {}
    for rules in by_field.values():
        earlier: ir.BooleanValue = ibis.literal(False)
        for rule in rules:
            winners[id(rule)] = usable[id(rule)] & ~earlier
            earlier = earlier | usable[id(rule)]
    # every rule's read, whether it wins, its timestamp and the span's own timestamps are a
    # stage of their own too: the fields, defects, status and end below use each several times
    # (inlined, the statement was megabytes of SQL: seconds of planning on DuckDB and an
    # executor's heap on a Spark cluster, for any file however small)
    stage: dict[str, ir.Value] = {}
    for i, rule in enumerate(fields):
        read = reads[id(rule)]
        stage[f"_r{i}_wins"] = winners[id(rule)]
        stage[f"_r{i}_bad"] = read.bad
        if rule.unit == "timestamp":
            us, bad = stamps[id(rule)]
            stage |= {f"_r{i}_us": us, f"_r{i}_usbad": bad}
        else:
            stage[f"_r{i}_value"] = read.value.cast(_ibis_type(rule.field))
    start, start_bad = nanos_us(found.start, engine, ns["start"])
    end, end_bad = nanos_us(found.end, engine, ns["end"])
    stage |= {"_start": start, "_start_bad": start_bad, "_end": end, "_end_bad": end_bad}
    found = barrier(found.mutate(**stage))
    values = read_back(found)
    for i, rule in enumerate(fields):
        winners[id(rule)] = found[f"_r{i}_wins"]
        value = found[f"_r{i}_value"] if rule.unit != "timestamp" else ibis.null(dt.string)
        reads[id(rule)] = _Read(value, found[f"_r{i}_bad"])
        if rule.unit == "timestamp":
            stamps[id(rule)] = (found[f"_r{i}_us"], found[f"_r{i}_usbad"])
    sources: dict[str, ir.StringValue] = {}
    for rule in fields:
        read = reads[id(rule)]
        wins = winners[id(rule)]
        source = sources.get(rule.field, ibis.null(dt.string))
        sources[rule.field] = ibis.ifelse(wins, ibis.literal(rule.source), source)
        defects.append(
            ibis.ifelse(
                wins & read.bad,
                ibis.literal(f"{SetAside.UNPARSEABLE_NUMBER}:{rule.field}"),
                ibis.null(dt.string),
            )
        )
        if rule.unit == "timestamp":
            us, bad = stamps[id(rule)]
            ft_us = ibis.ifelse(wins, us, ft_us)
            ft_bad = ibis.ifelse(wins, bad, ft_bad)
            continue
        cases = out.setdefault(rule.field, ibis.null(_ibis_type(rule.field)))
        out[rule.field] = ibis.ifelse(wins, read.value.cast(_ibis_type(rule.field)), cases)

    kind = ibis.literal(str(Kind.OTHER))
    operation = ibis.null(dt.string)
    kind_source = ibis.null(dt.string)
    for krule in reversed(kinds):
        v = values[krule.attribute]
        hit = v.present
        if krule.value is not None:
            hit = hit & (v.text.lower() == krule.value.lower()).fill_null(False)
        if krule.name_suffix is not None:
            suffix = krule.name_suffix.lower()
            hit = hit & found["name"].lower().endswith(suffix).fill_null(False)
        kind = ibis.ifelse(hit, ibis.literal(str(krule.kind)), kind)
        operation = ibis.ifelse(hit, ibis.literal(krule.operation, type=dt.string), operation)
        kind_source = ibis.ifelse(hit, ibis.literal(krule.attribute), kind_source)
    stream_log: ir.BooleanValue = ibis.literal(False)
    for slog in conv.stream_logs:
        v = values[slog.attribute]
        stream_log = stream_log | (
            v.present
            & (v.text.lower() == slog.value.lower()).fill_null(False)
            & found["name"].startswith(slog.name_prefix).fill_null(False)
            & values[slog.duration].present
        )
    kind = ibis.ifelse(stream_log, ibis.literal(str(Kind.OTHER)), kind)
    operation = ibis.ifelse(stream_log, ibis.null(dt.string), operation)
    sources["kind"] = ibis.ifelse(stream_log, ibis.null(dt.string), kind_source)
    out["operation"] = ibis.coalesce(out.get("operation", ibis.null(dt.string)), operation)

    # a call whose sources name no provider: the vendor its endpoint host names (derived)
    if conv.vendor_hosts and "endpoint" in out:
        endpoint = out["endpoint"]
        vendor = ibis.cases(
            *(
                (endpoint.re_search(h.regex).fill_null(False), h.provider)
                for h in conv.vendor_hosts
            ),
            else_=ibis.null(dt.string),
        )
        provider = out.get("provider", ibis.null(dt.string))
        derived = provider.isnull() & vendor.notnull()
        out["provider"] = ibis.coalesce(provider, vendor)
        sources["provider"] = ibis.ifelse(
            derived, ibis.literal(DERIVED_PROVIDER), sources.get("provider", ibis.null(dt.string))
        )

    # everything read so far is a stage of its own too: the status rules below refer to the
    # error type, the HTTP status and the messages many times each (inlined, the statement was
    # half a megabyte of SQL and five seconds of DuckDB's binding, for a file of two spans)
    head = ibis.literal(";").join(defects)
    staged: dict[str, ir.Value] = {
        **{f"_o_{k}": v for k, v in out.items()},
        **{f"_s_{k}": v for k, v in sources.items()},
        "_defects": ibis.ifelse(head == "", ibis.null(dt.string), head),
        "_kind": kind,
        "_stream": stream_log,
        "_ft_us": ft_us,
        "_ft_bad": ft_bad,
    }
    t = barrier(found.mutate(**staged))
    # and the status rules' findings over those columns, one more (``status.Findings``)
    failed = stripped_expr(t.code).isin(["2", "STATUS_CODE_ERROR"]).fill_null(False)
    error_type = t["_o_error_type"] if "error_type" in out else ibis.null(dt.string)
    http = t["_o_http_status"] if "http_status" in out else ibis.null(dt.int64)
    findings = findings_expr(
        failed=failed,
        error_type=error_type,
        http_status=http,
        exception_type=t.exception_type,
        exception_message=t.exception_message,
        message=t.message,
    )
    t = barrier(
        t.mutate(
            _failed=findings.failed, **{f"_f{i}": v for i, (v, _) in enumerate(findings.found)}
        )
    )
    found_by = tuple((t[f"_f{i}"], label) for i, (_, label) in enumerate(findings.found))
    status, status_source = Findings(t._failed, found_by).decided()
    out = {k: t[f"_o_{k}"] for k in out}
    sources = {k: t[f"_s_{k}"] for k in sources}
    defects = [t._defects]
    kind, stream_log, ft_us, ft_bad = t._kind, t._stream, t._ft_us, t._ft_bad
    start, start_bad = t._start, t._start_bad
    end, end_bad = t._end, t._end_bad
    defects += [
        _defect(start_bad, f"{SetAside.UNPARSEABLE_TIMESTAMP}:start_us"),
        _defect(end_bad, f"{SetAside.UNPARSEABLE_TIMESTAMP}:end_us"),
        _defect(ft_bad, f"{SetAside.UNPARSEABLE_TIMESTAMP}:ttft_ms"),
    ]
    # a span that ended before its first token arrived lasted at least until that token
    late = (ft_us > end).fill_null(False)
    end = ibis.ifelse(late, ft_us, end)
    end_source = ibis.ifelse(late, ibis.literal(FIRST_TOKEN_END), ibis.null(dt.string))
    from_first = (ft_us.cast("float64") - start.cast("float64")) / 1000.0
    out["ttft_ms"] = ibis.coalesce(from_first, out.get("ttft_ms", ibis.null(dt.float64)))

    error_type = out.get("error_type", ibis.null(dt.string))
    derived = ibis.coalesce(t.exception_type.nullif(""), _error_class(t.message))
    out["error_type"] = ibis.ifelse(
        error_type.isnull() & (status != str(Status.OK)), derived, error_type
    )
    out["status"] = status
    out["status_source"] = status_source
    out["kind"] = kind
    out["task_id"] = otlp_id(t.trace_id, 16, engine)
    out["span_id"] = otlp_id(t.span_id, 8, engine)
    out["parent_span_id"] = otlp_id(t.parent_id, 8, engine)
    out["name"] = t.name
    out["start_us"] = start
    out["end_us"] = end
    out["duration_ms"] = (end.cast("float64") - start.cast("float64")) / 1000.0
    out["source_file"] = t.source_file
    out["source_ref"] = t.source_ref
    joined = ibis.literal(";").join(defects)
    out["defect"] = ibis.ifelse(joined == "", ibis.null(dt.string), joined)
    # the evidence in two parts, the columns before and after end_us: ``_complete_streams``
    # puts a call's end between them when a stream log ends it
    names = [c.name for c in COLUMNS]
    halves = (names[: names.index("end_us")], names[names.index("end_us") + 1 :])
    out["evidence"], tail = (_pairs(sources, half) for half in halves)
    return t.select(
        **{
            c.name: out.get(c.name, ibis.null(_ibis_type(c.name))).cast(_ibis_type(c.name))
            for c in COLUMNS
        },
        _stream_log=stream_log,
        _request_model=out.get("request_model", ibis.null(dt.string)),
        _evidence_tail=tail,
        _end_source=end_source,
    )


def _pairs(sources: dict[str, ir.StringValue], names: Sequence[str]) -> ir.StringValue:
    """``records.evidence_text`` of the ``names`` among ``sources``: null when none."""
    pairs = [
        ibis.ifelse(sources[n].notnull(), n + "=" + sources[n], ibis.null(dt.string))
        for n in names
        if n in sources
    ]
    if not pairs:
        return ibis.null(dt.string)
    joined = ibis.literal(";").join(pairs)
    return ibis.ifelse(joined == "", ibis.null(dt.string), joined)


def _complete_streams(t: ir.Table) -> ir.Table:
    """``records._complete_streams`` in the engine: each stream log ends the model call of its
    task that ended last at or before the log's time (same requested model where both name
    one; ties by the larger span id). The call's ``end_us`` becomes the log's time, its
    duration is recomputed and its evidence says ``end_us=stream_log``; its missing
    ``STREAM_LOG_FIELDS`` come from the latest log that completed it (ties by the larger source
    reference)."""
    logs = t.filter(t._stream_log & t.start_us.notnull() & t.task_id.notnull()).select(
        _lf=t.source_file,
        _lt=t.task_id,
        _lid=t.source_ref,
        _lus=t.start_us,
        _lm=t._request_model,
        **{f"_l_{name}": t[name] for name in STREAM_LOG_FIELDS},
    )
    calls = t.filter((t.kind == str(Kind.LLM)) & ~t._stream_log & t.end_us.notnull()).select(
        _cf=t.source_file,
        _ct=t.task_id,
        _cid=t.source_ref,
        _cend=t.end_us,
        _cspan=t.span_id.fill_null(""),
        _cm=t._request_model,
    )
    pairs = logs.join(
        calls,
        [
            logs._lf == calls._cf,
            logs._lt == calls._ct,
            calls._cend <= logs._lus,
            logs._lm.isnull() | calls._cm.isnull() | (logs._lm == calls._cm),
        ],
    )
    rank = ibis.row_number().over(
        group_by=[pairs._lf, pairs._lid], order_by=[ibis.desc(pairs._cend), ibis.desc(pairs._cspan)]
    )
    pairs = pairs.mutate(_rank=rank)
    chosen = pairs.filter(pairs._rank == 0)
    # per call, the latest of the logs that chose it (ties by the larger source reference)
    latest = ibis.row_number().over(
        group_by=[chosen._cf, chosen._cid],
        order_by=[ibis.desc(chosen._lus), ibis.desc(chosen._lid)],
    )
    chosen = chosen.mutate(_latest=latest)
    ends = chosen.filter(chosen._latest == 0).select(
        "_cf", "_cid", *(f"_l_{name}" for name in STREAM_LOG_FIELDS), _new_end=chosen._lus
    )
    j = t.left_join(ends, [t.source_file == ends._cf, t.source_ref == ends._cid])
    done = j._new_end.notnull()
    end = ibis.coalesce(j._new_end, j.end_us)
    mark = ibis.ifelse(done, ibis.literal("end_us=" + STREAM_LOG_END), "end_us=" + j._end_source)
    joined = ibis.literal(";").join([j.evidence, mark, j._evidence_tail])
    evidence = ibis.ifelse(joined == "", ibis.null(dt.string), joined)
    return j.select(
        *[
            end.name("end_us")
            if c.name == "end_us"
            else ibis.ifelse(
                done, (end.cast("float64") - j.start_us.cast("float64")) / 1000.0, j.duration_ms
            ).name("duration_ms")
            if c.name == "duration_ms"
            else evidence.name("evidence")
            if c.name == "evidence"
            else ibis.coalesce(j[c.name], j[f"_l_{c.name}"]).name(c.name)
            if c.name in STREAM_LOG_FIELDS
            else j[c.name]
            for c in COLUMNS
        ]
    )


def _ibis_type(name: str) -> dt.DataType:
    return ibis.dtype(BY_NAME[name].type)


def _defect(flag: ir.BooleanValue, text: str) -> ir.StringValue:
    return ibis.ifelse(flag.fill_null(False), ibis.literal(text), ibis.null(dt.string))


def _error_class(message: ir.StringValue) -> ir.StringValue:
    """``status.error_class``: the class of ``RateLimitError('...')``, or a short first line."""
    line = stripped_expr(stripped_expr(message).re_extract(r"^([^\r\n]*)", 1))
    cls = line.re_extract(r"^([A-Za-z_][A-Za-z0-9_.]*)\s*[(:]", 1)
    return ibis.cases(
        (message.isnull() | (line == ""), ibis.null(dt.string)),
        (cls != "", cls),
        (line.length() <= 100, line),
        else_=ibis.null(dt.string),
    )


def with_tasks(t: ir.Table) -> ir.Table:
    """``records._with_tasks`` per file: a root span (no parent in its own file) of kind other
    is the task (after ``_complete_streams``)."""
    t = _complete_streams(t)
    keys = t.select(
        _f=t.source_file, _t=t.task_id, _s=t.span_id, _here=ibis.literal(True)
    ).distinct()
    j = t.left_join(
        keys,
        [t.source_file == keys._f, t.task_id == keys._t, t.parent_span_id == keys._s],
    )
    here = j._here.fill_null(False)
    base = ibis.ifelse(j.kind == str(Kind.TASK), str(Kind.OTHER), j.kind)
    kind = ibis.ifelse(~here & (base == str(Kind.OTHER)), str(Kind.TASK), base)
    return j.select(*[kind.name("kind") if c.name == "kind" else j[c.name] for c in COLUMNS])
