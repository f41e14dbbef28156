"""Injected faults between the client and a real Virtuoso: ``python -m benchmarks.faults``.

Virtuoso 7.2 (``kg_adapters/testing/virtuoso.py``) is loaded with FB15k-237 (``../shared/data``; the
bundled sample when absent) and reached through the fault-injecting proxy
(``kg_adapters/testing/fault_server.py`` in upstream mode), by ``connect("sparql+http://...")`` with its
retry wrapper. A seeded 1,000-operation workload (``kg_adapters/testing/fault_workload.py``: neighbors,
relations, paths, shortest_paths, subgraph, labels, search, raw query) runs once with no faults
(the reference answers and latencies), then with 10%, 30% and 50% of requests failing: 429 with
Retry-After, 500, 502, 503, connection resets and truncated bodies (weight 3 each), stalls and
slow drips that outlast the client timeout (weight 1 each: each costs a real timeout). Every
answer must equal the fault-free one. A sweep then raises the fault rate and lowers the retry
budget to find where typed errors (RetriesExhausted) start; a wrong answer is never acceptable.

The retry wrapper's sleep and clock are injected (``connect(..., sleep=, clock=)``): backoff and
Retry-After waits advance a virtual clock instead of sleeping, so the run takes minutes, not hours.
The retry budget (``retry_seconds``) is measured on that clock, which is real time plus the
virtual waits; the HTTP timeout (stalls, drips) runs on real time. Latencies are real time per
operation, so they include the timeouts of stalls and drips but not the backoff waits, which are
reported separately (``virtual_wait_seconds``).

Results: ``benchmarks/results/faults.json`` and ``faults.md``.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from benchmarks import common
from kg_adapters.testing.fault_workload import FAULT_KINDS, QUICK_FAULT_KINDS

FB15K = common.REPO_ROOT.parent / "shared" / "data" / "fb15k237-freebase.nt.gz"

QUICK_KINDS = QUICK_FAULT_KINDS
"""The sweep leaves out stalls and drips: each costs a real timeout, and the main runs cover them."""


log = common.log


class VirtualTime:
    """Real monotonic time plus every wait handed to ``sleep`` (which returns at once)."""

    def __init__(self) -> None:
        self.waited = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return time.monotonic() + self.waited

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.waited += max(0.0, seconds)


def run(
    upstream: str,
    ops: list[Any],
    reference: list[object] | None,
    *,
    fraction: float,
    kinds: tuple[str, ...],
    retries: int,
    timeout: float,
    seed: int,
) -> dict[str, Any]:
    """The workload through the proxy; answers compared with ``reference`` when given."""
    from kg_adapters import connect
    from kg_adapters.errors import KGError
    from kg_adapters.testing.fault_server import FaultPlan, FaultServer
    from kg_adapters.testing.fault_workload import run_op

    plan = FaultPlan(fraction=fraction, kinds=kinds, seed=seed, retry_after=2)
    virtual = VirtualTime()
    answers: list[object] = []
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    wrong: list[int] = []
    began = time.perf_counter()
    with FaultServer(upstream=upstream, plan=plan, drip_seconds=2 * timeout, drip_interval=0.05) as proxy:
        url = f"sparql+{proxy.url}?profile=freebase&dialect=virtuoso"
        kg = connect(url, timeout=timeout, retries=retries, retry_seconds=3600, sleep=virtual.sleep, clock=virtual)
        with kg:
            for index, op in enumerate(ops):
                started = time.perf_counter()
                try:
                    answer: object = run_op(kg, op)
                except KGError as exc:
                    errors[type(exc).__name__] += 1
                    answer = exc
                latencies[op.kind].append(time.perf_counter() - started)
                answers.append(answer)
                if reference is not None and not isinstance(answer, KGError) and answer != reference[index]:
                    wrong.append(index)
            transport = kg.transport  # type: ignore[attr-defined]  # no RetryingTransport when retries=0
            counters = {
                "requests": proxy.request_count,
                "retries": getattr(transport, "retries", 0),
                "gave_up": getattr(transport, "gave_up", 0),
                "virtual_wait_seconds": round(getattr(transport, "waited", 0.0), 1),
            }
    injected = Counter(fault for fault in plan.history if fault != "ok")
    return {
        "fraction": fraction,
        "retries_allowed": retries,
        "operations": len(ops),
        "identical_answers": len(ops) - len(wrong) - sum(errors.values()),
        "wrong_answers": len(wrong),
        "typed_errors": dict(errors),
        "injected": dict(sorted(injected.items())),
        "injected_total": sum(injected.values()),
        **counters,
        "spurious_retries": counters["retries"] - sum(injected.values()) + counters["gave_up"],
        "seconds": time.perf_counter() - began,
        "latency": {kind: values for kind, values in latencies.items()},
        "_answers": answers,
    }


def latency_rows(base: dict[str, Any], runs: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for kind in sorted(base["latency"]):
        reference = base["latency"][kind]
        row = [
            kind,
            str(len(reference)),
            common.fmt_seconds(common.median(reference)),
            common.fmt_seconds(common.percentile(reference, 95)),
        ]
        for result in runs:
            values = result["latency"][kind]
            row.append(
                f"{common.fmt_ratio(common.ratio(common.median(values), common.median(reference)))} / "
                f"{common.fmt_ratio(common.ratio(common.percentile(values, 95), common.percentile(reference, 95)))}"
            )
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(FB15K) if FB15K.is_file() else None)
    parser.add_argument("--operations", type=int, default=1000)
    parser.add_argument("--sweep-operations", type=int, default=200)
    parser.add_argument("--retries", type=int, default=15, help="retry budget of the main runs")
    parser.add_argument("--timeout", type=float, default=1.0, help="client timeout (stalls and drips outlast it)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    from kg_adapters.testing.fault_workload import build_workload
    from kg_adapters.testing.virtuoso import VirtuosoServer, virtuoso_version
    from reasoning.demo import sample_path

    data = Path(args.data) if args.data else sample_path()
    ops = build_workload(data, args.operations, seed=args.seed)
    began = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix="kga-faults-") as workdir,
        VirtuosoServer(Path(workdir), data_dirs=[data.parent]) as virtuoso,
    ):
        log(f"loading {data.name} into Virtuoso")
        triples = virtuoso.load([data])
        common_options = {"retries": args.retries, "timeout": args.timeout}
        log("fault-free reference run")
        base = run(virtuoso.sparql_url, ops, None, fraction=0.0, kinds=FAULT_KINDS, seed=0, **common_options)
        reference = base.pop("_answers")
        if base["typed_errors"]:
            raise SystemExit(f"the fault-free run failed: {base['typed_errors']}")
        runs = []
        for number, fraction in enumerate((0.1, 0.3, 0.5), start=1):
            log(f"{fraction:.0%} faults")
            result = run(
                virtuoso.sparql_url, ops, reference, fraction=fraction, kinds=FAULT_KINDS, seed=number, **common_options
            )
            result.pop("_answers")
            runs.append(result)
        sweep_ops = ops[: args.sweep_operations]
        sweep_reference = reference[: args.sweep_operations]
        sweep = []
        for fraction, retries in ((0.3, 0), (0.3, 1), (0.3, 2), (0.5, 2), (0.5, 4), (0.7, 4), (0.9, 4), (0.9, 15)):
            log(f"sweep: {fraction:.0%} faults, {retries} retries")
            result = run(
                virtuoso.sparql_url,
                sweep_ops,
                sweep_reference,
                fraction=fraction,
                kinds=QUICK_KINDS,
                retries=retries,
                timeout=args.timeout,
                seed=100 + retries,
            )
            result.pop("_answers")
            result.pop("latency")
            sweep.append(result)
        engine = virtuoso_version()
    wrong = sum(result["wrong_answers"] for result in (*runs, *sweep))
    data_out = {
        "benchmark": "faults",
        "machine": common.machine_info(("requests", "tenacity", "kg-adapters")),
        "source": common.source_fingerprint("kg_adapters"),
        "engine": engine,
        "data": data.name,
        "triples": triples,
        "settings": {
            "timeout": args.timeout,
            "retries": args.retries,
            "fault_kinds": list(FAULT_KINDS),
            "sweep_kinds": list(QUICK_KINDS),
            "seed": args.seed,
        },
        "seconds": time.perf_counter() - began,
        "fault_free": base,
        "runs": runs,
        "sweep": sweep,
    }
    main_rows = [
        ["0% (reference)", f"{base['operations']:,}", "-", f"{base['requests']:,}", "0", "0", "-", "-"],
        *[
            [
                f"{r['fraction']:.0%}",
                f"{r['operations']:,}",
                f"{r['identical_answers']:,}",
                f"{r['requests']:,}",
                f"{r['injected_total']:,}",
                f"{r['retries']:,}",
                f"{r['wrong_answers']}",
                ", ".join(f"{k} {v}" for k, v in r["typed_errors"].items()) or "none",
            ]
            for r in runs
        ],
    ]
    sweep_rows = [
        [
            f"{r['fraction']:.0%}",
            str(r["retries_allowed"]),
            f"{r['identical_answers']}/{r['operations']}",
            ", ".join(f"{k} {v}" for k, v in r["typed_errors"].items()) or "none",
            str(r["wrong_answers"]),
            f"{r['injected_total']:,}",
            f"{r['retries']:,}",
        ]
        for r in sweep
    ]
    markdown = "\n".join(
        [
            "# Injected faults in front of Virtuoso",
            "",
            f"`python -m benchmarks.faults` ({time.strftime('%Y-%m-%d', time.gmtime())}, {data_out['seconds']:.0f} s): "
            f"Virtuoso {engine} with {data.name} ({triples:,} triples) behind the fault-injecting proxy, reached "
            f"through `connect('sparql+http://...')` with timeout {args.timeout:g} s and {args.retries} retries. "
            f"Faults: 429 + Retry-After, 500, 502, 503, reset, truncated body (weight 3 each), stall and slow drip "
            f"beyond the timeout (weight 1 each). Backoff and Retry-After waits run on an injected virtual clock.",
            "",
            f"## {len(ops):,} operations per fault rate: every answer identical to the fault-free one",
            "",
            common.markdown_table(
                [
                    "faults",
                    "operations",
                    "identical answers",
                    "HTTP requests",
                    "faults injected",
                    "retries",
                    "wrong answers",
                    "typed errors",
                ],
                main_rows,
            ),
            "",
            "Added latency per operation (real time; includes the timeouts of stalls and drips, not the "
            "virtual backoff waits): median / p95 as a ratio to the fault-free run.",
            "",
            common.markdown_table(
                [
                    "operation",
                    "n",
                    "fault-free median",
                    "fault-free p95",
                    *[f"{r['fraction']:.0%}: median / p95" for r in runs],
                ],
                latency_rows(base, runs),
            ),
            "",
            "Virtual backoff waited: "
            + ", ".join(f"{r['fraction']:.0%}: {r['virtual_wait_seconds']:,.0f} s" for r in runs)
            + ". Retries not caused by an injected fault (timeouts of slow real answers): "
            + ", ".join(f"{r['fraction']:.0%}: {r['spurious_retries']}" for r in runs)
            + ".",
            "",
            f"## Where typed errors start ({len(sweep_ops)} operations, no stalls or drips)",
            "",
            common.markdown_table(
                [
                    "faults",
                    "retries allowed",
                    "identical answers",
                    "typed errors",
                    "wrong answers",
                    "faults injected",
                    "retries",
                ],
                sweep_rows,
            ),
            "",
            f"Wrong answers over every run: {wrong}. An operation either returns exactly the fault-free answer "
            "or raises a typed KGError: RetriesExhausted naming the attempts made, or with no retries "
            "the transient error itself (TransientError, RateLimited).",
            "",
        ]
    )
    print(markdown)
    if not args.no_write:
        for result in runs:
            result["latency"] = {
                k: {"median": common.median(v), "p95": common.percentile(v, 95)} for k, v in result["latency"].items()
            }
        base["latency"] = {
            k: {"median": common.median(v), "p95": common.percentile(v, 95)} for k, v in base["latency"].items()
        }
        common.save_report("faults", data_out, markdown)
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
