"""Assembles bench/gpu.sh's runs (one JSON object per line, Headroom's and PyTorch's) into
OUT.json and OUT.md and prints the table: per case and graph mode, ms/step of both, the ratio
(PyTorch ms / Headroom ms: > 1 means Headroom is faster) and peak memory. Needs no torch."""
import json
import sys


def mib(b):
    return "%.0f" % (b / 1048576.0) if isinstance(b, (int, float)) else "-"


def main():
    runs_path, out, steps = sys.argv[1], sys.argv[2], None
    if "--steps" in sys.argv:
        steps = int(sys.argv[sys.argv.index("--steps") + 1])
    runs = []
    with open(runs_path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    runs.append(json.loads(line))
                except ValueError:
                    runs.append({"error": "unreadable line: " + line[:200]})
    cases = {}
    for r in runs:
        key = (r.get("preset"), r.get("batch"), bool(r.get("graphs")))
        cases.setdefault(key, {})[r.get("impl", "?")] = r
    rows = []
    for (preset, batch, graphs), c in sorted(cases.items(), key=lambda kv: (str(kv[0][0]), kv[0][1] or 0, kv[0][2])):
        h, t, tr = c.get("headroom", {}), c.get("pytorch", {}), c.get("headroom-train", {})
        row = {"preset": preset, "batch": batch, "graphs": graphs,
               "headroom_ms_per_step": h.get("ms_per_step"), "pytorch_ms_per_step": t.get("ms_per_step"),
               "headroom_peak_ledger_bytes": h.get("peak_ledger_bytes"),
               "headroom_peak_reserved_bytes": h.get("peak_reserved_bytes"),
               "headroom_device_used_bytes": h.get("device_used_bytes"),
               "pytorch_max_memory_allocated_bytes": t.get("max_memory_allocated_bytes"),
               "pytorch_max_memory_reserved_bytes": t.get("max_memory_reserved_bytes"),
               "pytorch_device_used_bytes": t.get("device_used_bytes"),
               "headroom_error": h.get("error"), "pytorch_error": t.get("error"),
               "train_ms_per_step": tr.get("ms_per_step"), "train_error": tr.get("error")}
        if row["train_ms_per_step"] and row["pytorch_ms_per_step"]:
            row["train_ratio"] = row["pytorch_ms_per_step"] / row["train_ms_per_step"]
        if row["headroom_ms_per_step"] and row["pytorch_ms_per_step"]:
            row["ratio"] = row["pytorch_ms_per_step"] / row["headroom_ms_per_step"]
        rows.append(row)
    device = next((r.get("device") for r in runs if r.get("impl") == "headroom" and r.get("device")), None)
    torch = next((r.get("torch") for r in runs if r.get("torch")), None)
    doc = {"bench": "gpu", "steps": steps, "device": device, "torch": torch, "rows": rows, "runs": runs}
    with open(out + ".json", "w") as f:
        json.dump(doc, f, indent=2)
    lines = ["# GPU benchmark: Headroom vs PyTorch %s" % (torch or "(no peer)"), "", "Device: %s" % device, "",
             "| model | batch | graphs | Headroom ms/step | PyTorch ms/step | ratio | Headroom peak / +reserved / device MiB | PyTorch allocated / reserved / device MiB |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        fmt = lambda v: "%.3f" % v if isinstance(v, (int, float)) else "-"
        lines.append("| %s | %s | %s | %s | %s | %s | %s / %s / %s | %s / %s / %s |" % (
            r["preset"], r["batch"], "yes" if r["graphs"] else "no",
            fmt(r["headroom_ms_per_step"]) if not r["headroom_error"] else "failed",
            fmt(r["pytorch_ms_per_step"]) if not r["pytorch_error"] else "failed",
            "%.2fx" % r["ratio"] if r.get("ratio") else "-",
            mib(r["headroom_peak_ledger_bytes"]), mib(r["headroom_peak_reserved_bytes"]), mib(r["headroom_device_used_bytes"]),
            mib(r["pytorch_max_memory_allocated_bytes"]), mib(r["pytorch_max_memory_reserved_bytes"]),
            mib(r["pytorch_device_used_bytes"])))
    train = [r for r in rows if r.get("train_ms_per_step") or r.get("train_error")]
    if train:
        lines += ["", "`headroom train` itself (whole run's wall time per step, run.json; against PyTorch without graphs):", "",
                  "| model | batch | headroom train ms/step | PyTorch ms/step | ratio |", "|---|---|---|---|---|"]
        for r in train:
            fmt = lambda v: "%.3f" % v if isinstance(v, (int, float)) else "-"
            lines.append("| %s | %s | %s | %s | %s |" % (r["preset"], r["batch"],
                         fmt(r["train_ms_per_step"]) if not r["train_error"] else "failed",
                         fmt(r["pytorch_ms_per_step"]), "%.2fx" % r["train_ratio"] if r.get("train_ratio") else "-"))
    for r in rows:
        for side in ("headroom", "pytorch", "train"):
            if r[side + "_error"]:
                lines.append("")
                lines.append("%s %s batch %s graphs %s failed: %s" % (side, r["preset"], r["batch"], r["graphs"],
                                                                     str(r[side + "_error"]).strip()[-300:]))
    text = "\n".join(lines) + "\n"
    with open(out + ".md", "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
