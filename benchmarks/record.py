"""The markdown record of one ``throughput.py`` run: every table compares figures of that run
only (the floor, per correct submission, throughput vs stock, cold start)."""

from __future__ import annotations


def _floor(record: dict) -> list[str]:
    lines = ["## The floor (a solution's cells + every hidden check, one process, no isolation)",
             "", "| assignment | checks | median s | worst s |", "|---|---|---|---|"]
    for assignment, f in record["floor"].items():
        lines.append(f"| {assignment} | {f['checks']} | {f['median_s']:.3f} | "
                     f"{f['worst_s']:.3f} |")
    return lines


def _per_submission(record: dict) -> list[str]:
    if not record["per_submission"]:
        return []
    lines = ["", "## Per correct submission, `--jobs 1` (median of the batch's own times)", "",
             "| mode | assignment | notebooks | median s | worst s | x floor | whole command s |",
             "|---|---|---|---|---|---|---|"]
    for r in record["per_submission"]:
        lines.append(f"| {r['mode']} | {r['assignment']} | {r['count']} | {r['median_s']:.3f} "
                     f"| {r['worst_s']:.3f} | {r['x_floor']:.2f}x | {r['seconds']:.1f} |")
    return lines


def _throughput(record: dict) -> list[str]:
    if not record["runs"]:
        return []
    lines = ["", f"## Throughput, `--jobs {record['jobs']}`, {record['timeout_s']} s limit per "
             "submission", "", f"batches: {record['batches']}", "",
             "| mode | N | seconds | s / submission | x stock (same N) | x the floor's time "
             "(same N) | peak extra memory (machine) | peak grading memory (its processes and "
             "containers) |", "|---|---|---|---|---|---|---|---|"]
    stock = {r["n"]: r["seconds"] for r in record["runs"] if r["mode"] == "stock"}
    floor = {r["n"]: r["seconds"] for r in record["runs"] if r["mode"] == "floor"}
    order = {"stock": 0, "floor": 1}
    for r in sorted(record["runs"], key=lambda r: (r["n"], order.get(r["mode"], 2), r["mode"])):
        ratio = f"{stock[r['n']] / r['seconds']:.1f}x" if r["n"] in stock else "-"
        over = f"{r['seconds'] / floor[r['n']]:.2f}x" if r["n"] in floor else "-"
        mode = {"floor": "floor (no isolation: a fork per notebook)"}.get(r["mode"], r["mode"])
        mode += f" ({r['not_completed']} not graded)" if r.get("not_completed") else ""
        lines.append(f"| {mode} | {r['n']} | {r['seconds']:.1f} | "
                     f"{r['seconds'] / r['n']:.3f} | {ratio} | {over} | "
                     f"{r['peak_extra_memory_mb']} MB | "
                     f"{r.get('peak_grading_memory_mb', '-')} MB |")
    lines += ["", "same points for every notebook: " + ", ".join(
        f"N={n}: ours {a['ours']}, with stock {a['stock']}" for n, a in record["agree"].items())]
    for n, a in record["agree"].items():
        for name, points in a["differ"].items():
            lines.append(f"- N={n}, {name}: " + ", ".join(f"{m} {p}" for m, p in points.items()))
    return lines + _long_lived(record)


def _long_lived(record: dict) -> list[str]:
    """What lives for the whole run (the judge, its zygote, a judge container) as a batch is
    graded: flat in N when a run of 1000 holds at its end what a run of 300 holds."""
    rows = [r for r in record["runs"] if r.get("long_lived_memory_mb")]
    if not rows:
        return []
    marks = list(rows[0]["long_lived_memory_mb"])
    lines = ["", "## Memory in N: what lives for the whole run, as the batch is graded", "",
             "RSS in MB of the judge + its direct children (the zygote) + the judge container "
             "(docker-fork), when that share of the batch had its documents written (the "
             "exercises are graded first, then the porting notebooks; the reports after).", "",
             "| mode | N | " + " | ".join(marks) + " |", "|---|---|" + "---|" * len(marks)]
    for r in sorted(rows, key=lambda r: (r["mode"], r["n"])):
        held = r["long_lived_memory_mb"]
        lines.append(f"| {r['mode']} | {r['n']} | " + " | ".join(
            f"{sum(held[m].values())} ({held[m]['judge']} + {held[m]['children']}"
            f" + {held[m]['judge_container']})" if m in held else "-" for m in marks) + " |")
    return lines


def _cold(record: dict) -> list[str]:
    cold = record["cold_start"]
    if not cold:
        return []
    if "skipped" in cold:
        return ["", f"## Cold start: skipped ({cold['skipped']})"]
    lines = ["", "## Cold start of one submission, per entry point (a fresh container, "
             "create to exit)", "",
             "| entry | assignment | runs | median s | worst s | container CPU s, median |",
             "|---|---|---|---|---|---|"]
    for key, c in cold.items():
        entry, assignment = c.get("entry", key), c.get("assignment", "autograd-exercises")
        cpu = sorted(x for x in c.get("cpu_s", []) if x is not None)
        lines.append(f"| {entry} | {assignment} | {len(c.get('samples', []))} | "
                     f"{c['median_s']:.2f} | {c['worst_s']:.2f} | "
                     + (f"{cpu[len(cpu) // 2]:.2f} |" if cpu else "- |"))
    return lines


def markdown(record: dict) -> str:
    machine = record["machine"]
    lines = [f"# Throughput, {record['date']}", "",
             f"{machine['cpus']} CPUs, kernel {machine['kernel']}, load average "
             f"{machine['load_before']:.1f} before, {machine.get('load_after', 0):.1f} after; "
             f"seed {record['seed']}.", ""]
    lines += _floor(record) + _per_submission(record) + _throughput(record) + _cold(record)
    if record["images"]:
        lines += ["", "images: " + ", ".join(f"{k} {v} MB" if v else f"{k} not built"
                                             for k, v in record["images"].items())]
    return "\n".join(lines)
