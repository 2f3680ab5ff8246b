"""Print an OTLP JSON-lines recording span by span (for reading a new producer's shapes)."""

import json
import sys


def value(v):
    if "arrayValue" in v:
        return [value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: value(kv["value"]) for kv in v["kvlistValue"].get("values", [])}
    return next(iter(v.values()), None) if v else None


def main(path, long=False):
    for line in open(path):
        for rs in json.loads(line).get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                for s in ss.get("spans", []):
                    attrs = {a["key"]: value(a["value"]) for a in s.get("attributes", [])}
                    if not long:
                        attrs = {k: (v if not isinstance(v, str) or len(v) < 120 else v[:117] + "...") for k, v in attrs.items()}
                    dur = (int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])) / 1e6
                    print(f"--- {s['name']!r} scope={ss.get('scope', {}).get('name')} kind={s.get('kind')} "
                          f"id={s['spanId'][:6]} parent={s.get('parentSpanId', '')[:6]} trace={s['traceId'][:6]} {dur:.1f}ms status={s.get('status')}")
                    for k, v in attrs.items():
                        print(f"     {k} = {v!r}")
                    for e in s.get("events", []):
                        off = (int(e["timeUnixNano"]) - int(s["startTimeUnixNano"])) / 1e6
                        ea = {a["key"]: value(a["value"]) for a in e.get("attributes", [])}
                        ea = {k: (v if not isinstance(v, str) or len(v) < 100 else v[:97] + "...") for k, v in ea.items()}
                        print(f"     EVENT {e['name']!r} +{off:.1f}ms {ea}")


if __name__ == "__main__":
    main(sys.argv[1], "--long" in sys.argv)
