"""The contract's rules applied to spans, once: derived views of the span table with the source of
every derived value, and the one definition of scope, call state and region key.

Derivations (each records where its value came from, so a report can say "derived"):

- serving region: ``region`` as recorded, else the ``locations/<region>/`` part of a model
  resource path (Vertex AI writes its serving location there);
- network time: recorded ``network_ms``, else client duration − server processing − queue;
- model time: server processing when recorded, else client duration − network − queue;
- task time (``tasks``): one root span → its duration; several roots → first start to last end;
  an exported subtree (no root) → its envelope, flagged ``subtree``; a task whose only rows set
  aside are spans without an end → the envelope of what is recorded, ``unended``; the last two
  are lower bounds; see ``TaskSource``;
- tokens per second: output tokens over the whole request, or over the generation after the
  first token (duration − time to first token);
- model identity: resource paths and dated snapshots are stripped (``gpt-4o-2024-08-06`` →
  ``gpt-4o``) so contract scopes match the models traces report;
- a call-level term's metric (``point_value``): server processing as recorded, else derived
  (client duration − network − queue), else only the client duration — an upper bound that can
  prove a cap met but never breached (source ``client``);
- call state (``state``): the status class (``ok``, ``customer_error``, ``throttled``,
  ``vendor_error``, ``timeout``, ``unclassified``; the legacy ``error`` read by its HTTP status and
  error type, ``trace.status.status_class_expr``), ``cached`` for a gateway cache hit (never
  sent to the vendor), or ``unknown`` (no status recorded). An answered call (``succeeded``) is
  ``ok``, ``cached`` or ``unknown``: OpenTelemetry leaves a successful span's status unset, so a
  missing status is no sign of failure. Every consumer counts ``unknown``, ``unclassified`` and
  ``cached`` calls and says how many there were; none drops them or hides them;
- region key (``region_key``): the serving region trimmed and lower-cased, on both sides —
  ``CN-Shanghai`` in a trace is the contract's ``cn-shanghai`` — by one rule, ``names.region_key``,
  applied once per distinct recorded region (``RegionKeys``), never per call;
- scope (``scope_miss``): why a call is outside the contract's scope (a scope field missing on
  the call, or another value), null when it is in scope; which model decides is the contract's
  ``readings.model_scope`` (requested by default).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir
import pyarrow as pa

from slacheck.contract.model import (
    Contract,
    LatencyTerm,
    MeasurementPoint,
    ModelScope,
    Scope,
    TokensPerSecondBasis,
)
from slacheck.names import PATH_PREFIX as _PATH_PREFIX
from slacheck.names import SNAPSHOT as _SNAPSHOT
from slacheck.names import model_base as model_base
from slacheck.names import region_key as region_key
from slacheck.results import ScopeMatch
from slacheck.trace.conventions import table
from slacheck.trace.normalise import host_expr, host_of, stripped_expr
from slacheck.trace.schema import SetAside
from slacheck.trace.status import status_class_expr
from slacheck.trace.traces import Traces

_LOCATION = r"locations/([A-Za-z0-9_-]+)"


class CallState(StrEnum):
    """How a model call ended, as every check and the field check read it."""

    OK = "ok"
    CUSTOMER_ERROR = "customer_error"
    THROTTLED = "throttled"
    VENDOR_ERROR = "vendor_error"
    TIMEOUT = "timeout"
    #: a failure no source could classify: the contract's ``readings.unclassified_failures``
    #: says how it is read; always counted and named
    UNCLASSIFIED = "unclassified"
    #: answered by a gateway's response cache, never sent to the vendor: outside vendor terms
    #: unless ``readings.cache_hits`` says ``counted``
    CACHED = "cached"
    #: no status recorded: counted and reported; measured as answered (see the module doc)
    UNKNOWN = "unknown"


#: the states of a call that did not get an answer
FAILURE_STATES: tuple[CallState, ...] = (
    CallState.CUSTOMER_ERROR,
    CallState.THROTTLED,
    CallState.VENDOR_ERROR,
    CallState.TIMEOUT,
    CallState.UNCLASSIFIED,
)


class ScopeMiss(StrEnum):
    """Why a call is outside the contract's scope."""

    PROVIDER_MISSING = "provider_missing"
    PROVIDER_OTHER = "provider_other"
    MODEL_MISSING = "model_missing"
    MODEL_OTHER = "model_other"
    ENDPOINT_MISSING = "endpoint_missing"
    ENDPOINT_OTHER = "endpoint_other"


def state_expr(c: ir.Table) -> ir.StringValue:
    """The call state of a row with ``status``, ``http_status``, ``error_type`` and
    ``response_cached``: a cache hit is ``cached`` whatever its status; else the status class
    (the legacy ``error`` classified as a reader would); no status is ``unknown``."""
    cls = status_class_expr(c.status, c.http_status, c.error_type)
    return ibis.cases(
        (c.response_cached.fill_null(False), str(CallState.CACHED)),
        # the class is null exactly when no status was recorded: testing the status, not the
        # class, writes the class's expression once
        (c.status.isnull(), str(CallState.UNKNOWN)),
        else_=cls,
    )


def model_base_expr(model: ir.StringValue) -> ir.StringValue:
    return stripped_expr(model.lower()).re_replace(_PATH_PREFIX, "").re_replace(_SNAPSHOT, "")


def region_from_model_expr(model: ir.StringValue) -> ir.StringValue:
    return model.re_extract(_LOCATION, 1).nullif("")


def effective_scope(contract: Contract, term: LatencyTerm | None = None) -> Scope:
    """The term's own scope where it has one, else the contract's."""
    if term is not None and term.scope is not None:
        return term.scope
    return contract.scope


#: Fields a model call takes from a model-call span wrapping it when it lacks them itself.
_INHERITED = (
    "provider",
    "request_model",
    "response_model",
    "endpoint",
    "region",
    "service_tier",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "http_status",
    "status",
)


def model_calls(spans: ir.Table, wrappers: int | None = None) -> ir.Table:
    """The model calls: ``llm`` spans, each call once.

    A framework often wraps the client's call in a model-call span of its own (agno's
    OpenInference ``OpenAIChat.invoke`` around the OTel ``chat`` span): the innermost span is
    the call, closest to the vendor; the wrapper is dropped, and what the call does not record
    (provider, tokens, …) is taken from it. ``wrappers``: how many llm spans wrap another, when
    ingestion counted them (``Traces.llm_wrappers``); with none, every llm span is a call as it
    is, and the joins that look for wrappers are left out.
    """
    llm = spans.filter(spans.kind == "llm")
    if wrappers == 0:
        return llm
    kids = (
        llm.filter(llm.parent_span_id.notnull())
        .select(k_task=llm.task_id, k_parent=llm.parent_span_id)
        .distinct()
    )
    inner = llm.anti_join(kids, [llm.task_id == kids.k_task, llm.span_id == kids.k_parent])
    wrap = llm.select(
        w_task=llm.task_id, w_span=llm.span_id, **{f"w_{f}": llm[f] for f in _INHERITED}
    )
    j = inner.left_join(wrap, [inner.task_id == wrap.w_task, inner.parent_span_id == wrap.w_span])
    j = j.mutate(**{f: ibis.coalesce(j[f], j[f"w_{f}"]) for f in _INHERITED})
    return j.select(*inner.columns)


def provider_key_expr(provider: ir.StringValue) -> ir.StringValue:
    """A provider as compared: lower case, without an SDK's API suffix (the Vercel AI SDK
    writes ``openai.chat``, ``anthropic.messages``); OpenTelemetry's dotted names
    (``gcp.vertex_ai``, ``aws.bedrock``) keep their dots."""
    return stripped_expr(provider).lower().re_replace(_API_SUFFIX, "")


def provider_key(name: str) -> str:
    """The contract-side twin of ``provider_key_expr``."""
    return re.sub(_API_SUFFIX, "", name.strip().lower())


_API_SUFFIX = r"\.(chat|responses|messages|completion|completions|embedding|embeddings|image)$"


def _lookup(values: ir.StringColumn, **derived: Any) -> ir.Table:
    """``derived`` (functions of a string value) once per distinct non-null value of ``values``,
    keyed by column ``_key``: the regular expressions behind model bases, path regions and
    provider keys cost more than the rest of the derivation put together when run per call,
    and a trace holds a few dozen distinct names among millions of calls."""
    k = values.name("_key").as_table().distinct()
    k = k.filter(k._key.notnull())
    return k.mutate(**{name: fn(k._key) for name, fn in derived.items()})


#: at most this many distinct names, of at most this many characters in all, go into a query as
#: constants (``_inline``); more are joined
INLINE_NAMES = 256
INLINE_CHARS = 64 * 1024

_Maps = tuple[dict[str, str], ...]


def _inline(by_name: ir.Table, by_provider: ir.Table) -> tuple[_Maps, _Maps] | None:
    """The lookups as Python mappings (key → value, nulls left out), when they are small."""
    names = by_name.to_pyarrow().to_pylist()
    providers = by_provider.to_pyarrow().to_pylist()
    rows = names + providers
    if len(rows) > INLINE_NAMES or sum(len(str(v)) for r in rows for v in r.values()) > (
        INLINE_CHARS
    ):
        return None
    # a NUL ends a string literal in the engine's SQL: such names are joined, not inlined
    if any("\x00" in str(v) for r in rows for v in r.values()):
        return None

    def mapping(rows: list[dict[str, Any]], column: str) -> dict[str, str]:
        return {r["_key"]: r[column] for r in rows if r[column] is not None}

    return (mapping(names, "base"), mapping(names, "loc")), (mapping(providers, "key"),)


def _mapped(value: ir.StringValue, mapping: dict[str, str]) -> ir.StringValue:
    none = ibis.null().cast("string")
    if not mapping:
        return none
    return value.substitute(mapping, else_=none)


@dataclass(frozen=True)
class RegionKeys:
    """What a trace's recorded regions are read as (``names.region_key``: trimmed of every
    white space ``str.strip`` knows, lower-cased; empty reads as null), computed in Python once
    per distinct recorded region: as constants put into the queries (``inline``) when they are
    few, else as a table (``_rk`` → ``_rkey``) joined on the region."""

    inline: dict[str, str] | None = None
    table: ir.Table | None = None


def region_keys(regions: Iterable[str | None]) -> dict[str, str]:
    """Each distinct region → its key; regions whose key is empty (white space) are left out,
    and read as null."""
    out: dict[str, str] = {}
    for r in regions:
        if r is not None and r not in out:
            key = region_key(r)
            if key:
                out[r] = key
    return out


def region_keys_of(
    seen: ir.Table, keep: Callable[[ir.Table], ir.Table] | None = None
) -> RegionKeys:
    """``RegionKeys`` for the distinct regions in ``seen`` (a column ``region``: a few rows,
    one small query). ``keep``: computes the lookup table once when it is too large to inline."""
    keys = region_keys(seen.to_pyarrow().column("region").to_pylist())
    chars = sum(len(k) + len(v) for k, v in keys.items())
    # only printable names go into the SQL as constants: Spark reads a control character in a
    # string literal (a vertical tab) as something else, and a NUL ends one on DuckDB
    if len(keys) <= INLINE_NAMES and chars <= INLINE_CHARS and all(k.isprintable() for k in keys):
        return RegionKeys(inline=keys)
    table = region_key_table(keys)
    return RegionKeys(table=table if keep is None else keep(table))


def region_key_table(keys: dict[str, str]) -> ir.Table:
    """``keys`` (``region_keys``) as a lookup table: ``_rk`` (the region) → ``_rkey``."""
    schema = pa.schema([("_rk", pa.string()), ("_rkey", pa.string())])
    return ibis.memtable(pa.table([list(keys), list(keys.values())], schema=schema))


def with_region_key(c: ir.Table, keys: RegionKeys) -> ir.Table:
    """``c`` (with ``region`` as recorded and ``region_d``, as ``calls_of`` derives it) with
    ``region_key``: the recorded region's key, else the key of the region in the model's
    path (ASCII letters, digits, ``_`` and ``-``, so lower case is its key)."""
    path_key = c.region_d.lower()
    if keys.table is None:
        recorded = _mapped(c.region, keys.inline or {})
        return c.mutate(region_key=ibis.ifelse(c.region.notnull(), recorded, path_key))
    t = keys.table
    j = c.left_join(t, c.region == t._rk)
    j = j.mutate(region_key=ibis.ifelse(j.region.notnull(), j._rkey, path_key))
    return j.drop("_rk", "_rkey")


def calls(traces: Traces) -> ir.Table:
    """Every model call (see ``model_calls``) with derived columns and their sources."""
    c = calls_of(traces.spans, traces.llm_wrappers)
    llm = traces.spans.filter(traces.spans.kind == "llm")
    return with_region_key(c, region_keys_of(llm.select("region").distinct()))


@dataclass(frozen=True)
class Names:
    """What a trace's model and provider names are read as (model base, region in the model's
    path, provider key), looked up once per distinct name (``_lookup``): as tables, or as
    constants put into the queries (``inline``) when they are few."""

    by_name: ir.Table
    by_provider: ir.Table
    inline: tuple[_Maps, _Maps] | None = None


def names_of(seen: ir.Table, keep: Callable[[ir.Table], ir.Table] | None = None) -> Names:
    """The lookups for the distinct names in ``seen`` (``request_model``, ``response_model``,
    ``provider``; a few rows). ``keep``: see ``calls_of``; with it the lookups are constants
    when small (``_inline``), else kept as tables."""
    names = ibis.union(
        seen.select(n=seen.request_model), seen.select(n=seen.response_model), distinct=False
    )
    by_name = _lookup(names.n, base=model_base_expr, loc=region_from_model_expr)
    by_provider = _lookup(seen.provider, key=provider_key_expr)
    if keep is None:
        return Names(by_name, by_provider)
    # the lookups are read from the kept distinct names (a few rows): kept themselves only
    # when there are too many to put into the queries
    inline = _inline(by_name, by_provider)
    if inline is None:
        return Names(keep(by_name), keep(by_provider))
    return Names(by_name, by_provider, inline)


def with_names(c: ir.Table, names: Names) -> ir.Table:
    """``c`` (any table with ``request_model``, ``response_model`` and ``provider``) with what
    its names are read as: ``provider_key``, ``model``, ``requested``, ``served_model``, and
    the parts behind them (``_rq_base``, ``_rq_loc``, ``_rs_base``, ``_rs_loc``)."""
    if names.inline is not None:
        # the names as constants in the query: a query that reads no name reads none, where a
        # join would read and match every call's names in every query of the view
        (base, loc), (pkey,) = names.inline
        c = c.mutate(
            _rq_base=_mapped(c.request_model, base),
            _rq_loc=_mapped(c.request_model, loc),
            _rs_base=_mapped(c.response_model, base),
            _rs_loc=_mapped(c.response_model, loc),
            provider_key=_mapped(c.provider, pkey),
        )
    else:
        by_name, by_provider = names.by_name, names.by_provider
        req = by_name.select(_rq=by_name._key, _rq_base=by_name.base, _rq_loc=by_name.loc)
        resp = by_name.select(_rs=by_name._key, _rs_base=by_name.base, _rs_loc=by_name.loc)
        prov = by_provider.select(_pv=by_provider._key, provider_key=by_provider.key)
        c = c.left_join(req, c.request_model == req._rq)
        c = c.left_join(resp, c.response_model == resp._rs)
        c = c.left_join(prov, c.provider == prov._pv).drop("_rq", "_rs", "_pv")
    return c.mutate(
        # model_base_expr(coalesce(response, request)): a name's base is null only when it is
        model=ibis.coalesce(c._rs_base, c._rq_base),
        requested=c._rq_base,
        served_model=c._rs_base,
    )


def calls_of(
    spans: ir.Table,
    wrappers: int | None = None,
    keep: Callable[[ir.Table], ir.Table] | None = None,
    names: Names | None = None,
    regions: RegionKeys | None = None,
) -> ir.Table:
    """``calls`` from a span table: the usable spans, or only their ``llm`` rows (which is all
    this reads). ``wrappers``: see ``model_calls``. ``keep`` computes a small derived table
    once (the name lookups), for a caller that queries the result as a view many times.
    ``names``: the lookups, when the caller has made them (``names_of``). ``regions``: the
    region keys (``region_keys_of``); without them the calls have no ``region_key`` yet
    (``with_region_key`` adds it)."""
    llm = spans.filter(spans.kind == "llm")
    c = model_calls(llm, wrappers)
    if names is None:
        # the lookups are keyed on every llm span's names, a superset of the calls' (a call
        # takes missing names from its wrapper, itself an llm span): no second pass over the
        # calls. The distinct names come from one scan of the spans
        seen = llm.select("request_model", "response_model", "provider").distinct()
        names = names_of(seen if keep is None else keep(seen), keep)
    c = with_names(c, names)
    path_region = ibis.coalesce(c._rq_loc, c._rs_loc)
    queue = c.queue_ms.fill_null(0.0)
    net_derived = c.duration_ms - c.server_ms - queue
    model_from_net = c.duration_ms - c.network_ms - queue
    gen_ms = c.duration_ms - c.ttft_ms
    region_d = ibis.coalesce(c.region, path_region)
    out = c.mutate(
        state=state_expr(c),
        region_d=region_d,
        region_source=ibis.cases(
            (c.region.notnull(), "recorded"),
            (path_region.notnull(), "model_path"),
            else_=ibis.null().cast("string"),
        ),
        network_d=ibis.coalesce(c.network_ms, net_derived),
        network_source=ibis.cases(
            (c.network_ms.notnull(), "recorded"),
            (net_derived.notnull(), "derived"),
            else_=ibis.null().cast("string"),
        ),
        model_ms=ibis.coalesce(c.server_ms, model_from_net),
        model_source=ibis.cases(
            (c.server_ms.notnull(), "recorded"),
            (model_from_net.notnull(), "derived"),
            else_=ibis.null().cast("string"),
        ),
        tps_whole=ibis.ifelse(c.duration_ms > 0, _per_second(c.output_tokens, c.duration_ms), None),
        tps_gen=ibis.ifelse(gen_ms > 0, _per_second(c.output_tokens, gen_ms), None),
    )
    out = out.drop("_rq_base", "_rq_loc", "_rs_base", "_rs_loc")
    return out if regions is None else with_region_key(out, regions)


def succeeded(c: ir.Table) -> ir.BooleanValue:
    """Whether a call (from ``calls``) was answered: state ``ok``, ``cached`` (by a cache) or
    ``unknown`` (no status). Whether a cache hit counts in a vendor term is the contract's
    ``readings.cache_hits``, applied as an exclusion (``CheckContext.exclusion_reason``)."""
    return c.state.isin([str(CallState.OK), str(CallState.CACHED), str(CallState.UNKNOWN)])


def point_value(
    c: ir.Table, point: MeasurementPoint, basis: TokensPerSecondBasis | None = None
) -> tuple[ir.FloatingValue, ir.StringValue]:
    """A call-level term's metric per call (from ``calls``) and its source.

    Sources: ``recorded`` (tokens/s counts as recorded when its inputs are), ``derived``
    (server processing as client duration − network − queue), ``client`` (server processing
    known only as the client duration: an upper bound), or null when the call cannot be metered.
    An unstated tokens/s basis gives the whole-request reading; callers that must show both
    readings use ``tps_whole`` and ``tps_gen``. ``task_end_to_end`` is a task metric: use
    ``tasks(...).task_ms`` and ``task_source``.
    """
    none = ibis.null().cast("string")
    if point is MeasurementPoint.SERVER_PROCESSING:
        value = ibis.coalesce(c.model_ms, c.duration_ms)
        source = ibis.cases(
            (c.model_source.notnull(), c.model_source),
            (c.duration_ms.notnull(), "client"),
            else_=none,
        )
        return value, source
    if point is MeasurementPoint.TIME_TO_FIRST_TOKEN:
        return c.ttft_ms, c.ttft_ms.notnull().ifelse("recorded", none)
    if point is MeasurementPoint.FULL_RESPONSE:
        return c.duration_ms, c.duration_ms.notnull().ifelse("recorded", none)
    if point is MeasurementPoint.OUTPUT_TOKENS_PER_SECOND:
        value = c.tps_gen if basis is TokensPerSecondBasis.AFTER_FIRST_TOKEN else c.tps_whole
        return value, value.notnull().ifelse("recorded", none)
    raise ValueError(f"{point} is a task metric, not a call metric: use tasks().task_ms")


def scope_miss(
    c: ir.Table, scope: Scope, model_scope: ModelScope = ModelScope.REQUESTED
) -> ir.StringValue:
    """Why a call (from ``calls``) is outside ``scope``, or null when it is in; empty lists mean
    any. The first unmet field is given: provider, then model, then endpoint."""
    cases: list[tuple[ir.BooleanValue, ir.StringValue]] = []

    def field(
        value: ir.StringValue, wanted: list[str], missing: ScopeMiss, other: ScopeMiss
    ) -> None:
        cases.append((value.isnull(), ibis.literal(str(missing))))
        cases.append((~value.isin(wanted), ibis.literal(str(other))))

    if scope.providers:
        field(c.provider_key, [provider_key(p) for p in scope.providers], *_PROVIDER)
    if scope.models:
        bases = sorted({model_base(m) for m in scope.models})
        if model_scope is ModelScope.EITHER:
            known = c.requested.notnull() | c.served_model.notnull()
            hit = c.requested.isin(bases).fill_null(False) | c.served_model.isin(bases).fill_null(
                False
            )
            cases.append((~known, ibis.literal(str(ScopeMiss.MODEL_MISSING))))
            cases.append((~hit, ibis.literal(str(ScopeMiss.MODEL_OTHER))))
        else:
            # the chosen side, else the other when the source recorded only one model name
            first, second = (
                (c.requested, c.served_model)
                if model_scope is ModelScope.REQUESTED
                else (c.served_model, c.requested)
            )
            field(ibis.coalesce(first, second), bases, *_MODEL)
    if scope.endpoints:
        field(endpoint_key(c.endpoint), [host_key(e) for e in scope.endpoints], *_ENDPOINT)
    if not cases:
        return ibis.null().cast("string")
    return ibis.cases(*cases, else_=ibis.null().cast("string"))


def host_key(endpoint: str) -> str:
    """A contract's endpoint as the key calls are compared by: its host (``normalise.host_of``,
    so ``https://api.openai.com/v1/`` in a scope is ``api.openai.com``)."""
    return host_of(endpoint, table().placeholders) or endpoint.strip().lower()


def endpoint_key(endpoint: ir.StringValue) -> ir.StringValue:
    """A call's endpoint as the key scopes are compared by: the same host normaliser, so an
    endpoint a mapping or a canonical file carries as a URL matches its host too."""
    return host_expr(endpoint, table().placeholders)


_PROVIDER = (ScopeMiss.PROVIDER_MISSING, ScopeMiss.PROVIDER_OTHER)
_MODEL = (ScopeMiss.MODEL_MISSING, ScopeMiss.MODEL_OTHER)
_ENDPOINT = (ScopeMiss.ENDPOINT_MISSING, ScopeMiss.ENDPOINT_OTHER)


def in_scope(
    c: ir.Table, scope: Scope, model_scope: ModelScope = ModelScope.REQUESTED
) -> ir.BooleanValue:
    """Whether a call (from ``calls``) is covered by ``scope`` (see ``scope_miss``)."""
    # `& start_us.notnull()` (true of every usable span): a column, never a bare literal, so
    # `.sum()` works on any scope; the start, which nearly every query reads anyway, not a long
    # id column a query would read for this alone
    return scope_miss(c, scope, model_scope).isnull() & c.start_us.notnull()


def scoped(c: ir.Table, contract: Contract, term: LatencyTerm | None = None) -> ir.BooleanValue:
    """Whether a call is in the scope of ``term`` (its own scope, else the contract's), read as
    the contract's ``readings.model_scope`` says. What every consumer filters calls with."""
    return in_scope(c, effective_scope(contract, term), contract.readings.model_scope)


def scope_match(c: ir.Table, scope: Scope, model_scope: ModelScope) -> ScopeMatch:
    """How many calls the scope covers, and which listed values match no call at all.

    One scan groups the calls by the names the scope reads (few distinct combinations); the
    scope test, the endpoint's host key and the names seen are then computed on those groups,
    not once per call."""
    names = ["provider_key", "model", "requested", "served_model", "endpoint"]
    g = c.group_by([*names, c.start_us.notnull().name("_dated")]).aggregate(_n=c.count())
    g = g.mutate(_hit=scope_miss(g, scope, model_scope).isnull() & g._dated)
    g = g.mutate(_endpoint=endpoint_key(g.endpoint))
    rows = g.select("provider_key", "model", "requested", "_endpoint", "_hit", "_n")
    got = rows.to_pyarrow().to_pylist()
    calls = sum(int(r["_n"]) for r in got)
    matched = sum(int(r["_n"]) for r in got if r["_hit"])

    def seen(column: str) -> set[str]:
        return {r[column] for r in got if r[column] is not None}

    have_models = seen("model") | seen("requested")
    providers, endpoints = seen("provider_key"), seen("_endpoint")
    unmatched = [f"provider {p}" for p in scope.providers if provider_key(p) not in providers]
    unmatched += [f"model {m}" for m in scope.models if model_base(m) not in have_models]
    unmatched += [f"endpoint {e}" for e in scope.endpoints if host_key(e) not in endpoints]
    return ScopeMatch(calls, matched, tuple(unmatched))


class TaskSource(StrEnum):
    """Where a task's time comes from (the one task-time rule)."""

    #: the task's one root span (no parent): its duration
    ROOT_SPAN = "root_span"
    #: several root spans: the first start to the last end of the task's spans
    ROOTS_ENVELOPE = "roots_envelope"
    #: no root in the export (an exported subtree): first start to last end, a lower bound
    SUBTREE = "subtree"
    #: a span of the task has a start and no end (``missing_end``), every other row usable: the
    #: first start to the last time recorded (an end, or that span's start), a lower bound
    UNENDED = "unended"


#: task times that are lower bounds on the task's: they can prove an ``at_most`` term breached,
#: never met
LOWER_BOUND_SOURCES: tuple[TaskSource, ...] = (TaskSource.SUBTREE, TaskSource.UNENDED)


def lower_bound(task_source: ir.StringValue) -> ir.BooleanValue:
    """Per task (``tasks().task_source``): its time is a lower bound (``LOWER_BOUND_SOURCES``);
    false for a task with no time."""
    return task_source.isin([str(x) for x in LOWER_BOUND_SOURCES]).fill_null(False)


def _per_second(tokens: ir.IntegerValue, ms: ir.FloatingValue) -> ir.FloatingValue:
    """Tokens per second over ``ms`` (a whole number of µs, as every duration is), in one
    division of exact integers, so a speed exactly at a limit is that limit: as
    ``tokens / (ms / 1000)``, with two roundings, 7 tokens in 280 ms made 24.999999999999996
    tokens/s and failed an at-least limit of 25."""
    return (tokens.cast("float64") * 1e6) / _whole_us(ms)


#: the type of an exact sum of figures: every figure slacheck reads has at most 9 decimals (µs
#: as ms, or tokens over µs; a server's sum in seconds is read to the ns), and a sum of them stays
#: far below 10²⁹
EXACT = dt.Decimal(38, 9)


def exact_sum(x: ir.NumericValue) -> ir.NumericScalar:
    """Σ of a column in exact decimals (each value rounded to 9 decimals, then added without
    rounding): the sum a mean's test at the limit compares, where a sum of doubles rounds."""
    return x.cast(EXACT).sum()


def exact_total(threshold: float, n: ir.IntegerValue) -> ir.NumericValue:
    """threshold × n in exact decimals: the sum of n figures whose mean is exactly the
    threshold, as the contract writes it (``repr``: 40.1 is 40.1, not its double's expansion)."""
    return ibis.literal(Decimal(repr(float(threshold))), type=EXACT) * n


def _whole_us(ms: ir.NumericValue) -> ir.FloatingValue:
    """Milliseconds as the whole number of µs they hold, a double (exact below 2⁵³ µs)."""
    return (ms * 1000.0).round().cast("float64")


def sum_ms(x: ir.NumericValue, where: ir.BooleanValue | None = None) -> ir.FloatingScalar:
    """Σ of a column of milliseconds (finite: ingestion sets other values aside) over the rows
    ``where`` holds, the same to the last digit whatever order the engine adds them in: each
    value rounded to whole µs as a double (an integer below 2⁵³ is one exactly, and so is every
    partial sum of them), then ÷ 1000. A plain sum of doubles rounds at each step, so its last
    digits followed the engine's threads: ``slacheck budget --format json`` gave other
    figures each run on the same traces."""
    return _whole_us(x).sum(where=where) / 1000.0


def _us_sum_ms(t: ir.Table, where: ir.BooleanValue) -> ir.FloatingValue:
    """Σ ``duration_ms`` of the rows ``where`` holds (null: none), exactly: as whole µs, each
    a double (an integer below 2⁵³ is one exactly, and so is every partial sum of them: no
    rounding, so no order matters), where an integer sum is a 128-bit state per group on
    DuckDB (at 100 M spans, 4.4 M groups: the check of the bench folder took 128 s of wall time
    with it, 122 s with this)."""
    return (t.end_us - t.start_us).cast("float64").sum(where=where) / 1000.0


def tasks(traces: Traces) -> ir.Table:
    """One row per task id: span envelope, roots, step counts, time in tool and retrieval
    spans, completeness, task time.

    The task-time rule: one root span (no parent) gives its duration; several roots give the
    first start to the last end of the task's spans (as Langfuse's trace latency does); a task
    whose root is not in the export (a subtree) gives its spans' envelope, flagged
    ``subtree``, a lower bound. An envelope is taken only when no row of the task was set aside
    (a lost span could lie at its edge), with one exception: spans set aside only for having no
    end (``missing_end``, still open when exported) have a start, and the envelope of what is
    recorded — their starts included — is a lower bound on the task's time (``unended``).
    Otherwise the task has no time.
    """
    t = traces.spans
    is_root = t.parent_span_id.isnull()
    per = t.group_by("task_id").aggregate(
        first_start_us=t.start_us.min(),
        last_end_us=t.end_us.max(),
        roots=is_root.sum(),
        root_ms=is_root.ifelse(t.duration_ms, None).max(),
        root_start_us=is_root.ifelse(t.start_us, None).min(),
        llm_calls=(t.kind == "llm").sum(),
        tool_calls=(t.kind == "tool").sum(),
        retrieval_calls=(t.kind == "retrieval").sum(),
        # the time in tool and retrieval spans, nested ones included (null: none): summed in
        # whole µs (``duration_ms`` is end − start in ms), so the sum is exact and the same in
        # any order of the rows, where a sum of the ms differs in its last bits from run to run
        # with the engine's threads
        tool_span_ms=_us_sum_ms(t, t.kind == "tool"),
        retrieval_span_ms=_us_sum_ms(t, t.kind == "retrieval"),
        spans=t.count(),
        orphans=t.orphan.sum(),
    )
    bad = traces.set_aside_rows
    bad = bad.filter(bad.task_id.notnull())
    open_ = (bad._reason == str(SetAside.MISSING_END)).fill_null(False)
    lost = bad.group_by("task_id").aggregate(
        set_aside=bad.count(),
        unended=open_.sum(),
        open_lo_us=open_.ifelse(bad.start_us, None).min(),
        open_hi_us=open_.ifelse(bad.start_us, None).max(),
    )
    j = per.left_join(lost, per.task_id == lost.task_id).drop("task_id_right")
    set_aside = j.set_aside.fill_null(0)
    complete = (j.orphans == 0) & (set_aside == 0)
    envelope = (j.last_end_us - j.first_start_us).cast("float64") / 1000.0
    one_root = j.roots == 1
    whole = set_aside == 0
    only_open = (set_aside > 0) & (j.unended.fill_null(0) == set_aside)
    lo = ibis.ifelse(j.open_lo_us < j.first_start_us, j.open_lo_us, j.first_start_us)
    hi = ibis.ifelse(j.open_hi_us > j.last_end_us, j.open_hi_us, j.last_end_us)
    recorded = (hi - lo).cast("float64") / 1000.0
    none = ibis.null().cast("string")
    return j.mutate(
        set_aside=set_aside,
        complete=complete,
        start_us=ibis.cases((one_root, j.root_start_us), (only_open, lo), else_=j.first_start_us),
        task_ms=ibis.cases(
            (one_root, j.root_ms),
            (whole, envelope),
            (only_open, recorded),
            else_=ibis.null().cast("float64"),
        ),
        task_source=ibis.cases(
            (one_root, str(TaskSource.ROOT_SPAN)),
            (whole & (j.roots > 1), str(TaskSource.ROOTS_ENVELOPE)),
            (whole & (j.roots == 0), str(TaskSource.SUBTREE)),
            (only_open, str(TaskSource.UNENDED)),
            else_=none,
        ),
    )
