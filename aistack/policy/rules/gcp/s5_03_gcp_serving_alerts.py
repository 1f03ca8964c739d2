"""AIS-S5-03: each weighted URL map has alerts on p99 backend latency and the 5xx ratio."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import URL_MAPS, alert_filters


@rule(
    id="AIS-S5-03",
    checklist=["S5"],
    info="Serving load balancers alert on p99 backend latency and on the 5xx share.",
    why="Generation gets slow before it fails, and a failing version answers 5xx to its "
    "share of users. Without alerts on the load balancer's own metrics "
    "(loadbalancing.googleapis.com https/*/backend_latencies and request_count) users "
    "notice first.",
    fix="Add alert policies with ALIGN_PERCENTILE_99 on backend_latencies and a ratio of "
    "5xx request_count, filtered on the URL map (gcp.InferenceTier does).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    alerts = alert_filters(graph)
    for url_map in graph.resources:
        if url_map.type not in URL_MAPS:
            continue
        if not (url_map.inputs.get("defaultRouteAction") or {}).get("weightedBackendServices"):
            continue
        mine = [
            (f, c)
            for _, f, c in alerts
            if "url_map_name" in f and url_map.name.split("-urlmap")[0] in f
        ]
        latency = any(
            "backend_latencies" in f
            and any(a.get("perSeriesAligner") == "ALIGN_PERCENTILE_99"
                    for a in c.get("aggregations") or [])
            for f, c in mine
        )  # fmt: skip
        errors = any("request_count" in f and "500" in f and c.get("denominatorFilter")
                     for f, c in mine)  # fmt: skip
        if latency and errors:
            yield ok(url_map, "p99 latency and 5xx ratio alerts watch this load balancer.")
        else:
            missing = [n for n, has in (("p99 latency", latency), ("5xx ratio", errors)) if not has]
            yield fail(url_map, f"no {' and no '.join(missing)} alert on this load balancer.")
