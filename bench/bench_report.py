"""Turns the raw results of one scripts/bench run into a table on stdout and PREFIX.json / PREFIX.md
(plus NAME-latest.json / .md next to them). Standard library only.

usage: bench_report.py cpu RUN_DIR PREFIX [--threads T] [--coretype C] [--load-after L]
       bench_report.py gui|telemetry RAW.json PREFIX [--threads T] [--load-after L]"""
import argparse
import glob
import json
import os
import platform
import shutil
import statistics
import subprocess
import time


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


def table(headers, rows):
    """Markdown table (also readable as plain text)."""
    cells = [[str(c) for c in r] for r in [headers] + rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    fmt = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    lines = [fmt(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [fmt(r) for r in cells[1:]]
    return "\n".join(lines)


def met(ok):
    return "met" if ok else "NOT met"


def report_cpu(a, m):
    d = a.raw
    ours = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(d, "headroom-*", "run.json")))]
    theirs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(d, "torch-*.json")))]
    if not ours:
        raise SystemExit("bench_report.py: no Headroom run.json under " + d)
    o_ips = statistics.mean(r["final"]["images_per_second"] for r in ours)
    o_acc = statistics.mean(r["final"]["test_accuracy"] for r in ours)
    rows = [["Headroom", "%.0f" % o_ips, "%.2f %%" % (100 * o_acc), ours[0]["device"]]]
    res = {"bench": "cpu", "machine": m, "threads": a.threads, "openblas_coretype": a.coretype,
           "epochs": ours[0]["config"]["epochs"], "batch": ours[0]["config"]["batch"],
           "headroom": {"images_per_second": o_ips, "test_accuracy": o_acc,
                        "runs": [{"images_per_second": r["final"]["images_per_second"],
                                  "test_accuracy": r["final"]["test_accuracy"],
                                  "epochs": r["epochs"]} for r in ours]}}
    lines = []
    if theirs:
        t_ips = statistics.mean(r["images_per_second"] for r in theirs)
        t_acc = statistics.mean(r["test_accuracy"] for r in theirs)
        rows.append(["PyTorch " + theirs[0]["torch_version"], "%.0f" % t_ips, "%.2f %%" % (100 * t_acc),
                     "torch.set_num_threads(%d), OPENBLAS_CORETYPE=%s" % (theirs[0]["threads"],
                                                                          theirs[0]["openblas_coretype"] or "-")])
        ratio = o_ips / t_ips
        dacc = 100 * (o_acc - t_acc)
        res["pytorch"] = {"images_per_second": t_ips, "test_accuracy": t_acc, "runs": theirs}
        res["ratio"] = ratio
        res["accuracy_difference_points"] = dacc
        res["targets"] = {"ratio_at_least_1.5": ratio >= 1.5, "accuracy_within_1_point": abs(dacc) <= 1.0}
        lines.append("ratio (Headroom / PyTorch images/s): %.2fx   target >= 1.5x: %s" % (ratio, met(ratio >= 1.5)))
        lines.append("test accuracy difference: %+.2f points   target within 1 point: %s" % (dacc, met(abs(dacc) <= 1.0)))
    else:
        lines.append("PyTorch not run (/usr/bin/python3 cannot import torch): no ratio")
    title = ("seed-cnn, Fashion-MNIST, batch 64, SGD lr 0.01 momentum 0.5, %d epochs, %s threads, "
             "%d round(s); training-loop time only" % (res["epochs"], a.threads, len(ours)))
    body = table(["", "images/s", "test accuracy", "setup"], rows)
    return res, title, body, lines


def report_gui(a, m):
    r = json.load(open(a.raw))
    r["machine"] = m
    rows = []
    for run in r["runs"]:
        for kind in ("headless", "gui"):
            x = run[kind]
            rows.append([run["round"], "window (offscreen)" if kind == "gui" else "headless",
                         "%.0f" % x["trainer_images_per_second"], "%.0f" % x["wall_images_per_second"],
                         "%.2f %%" % (100 * x["test_accuracy"]),
                         ("%d replots, mean %.1f ms" % (x["chart_replots"], x["chart_replot_ms_mean"]))
                         if kind == "gui" else ""])
    body = table(["round", "run", "images/s (trainer)", "images/s (wall)", "test accuracy", "charts during run"], rows)
    ratio, wall = r["ratio"], r["wall_ratio"]
    lines = ["GUI / headless images/s (trainer figure): %.1f %%   (wall clock: %.1f %%)   target >= 97 %%: %s"
             % (100 * ratio, 100 * wall, met(ratio >= 0.97))]
    rp = [["%d x %d" % (x["series"], x["points_appended_per_series"]), x.get("variant", ""), x["points_held_per_series"],
           "%.2f" % x["replot_ms_median"], "%.2f" % x["replot_ms_max"]] for x in r["replot"]]
    body += "\n\nReplot of one LiveChart (%dx%d, rescale + rpImmediateRefresh, 50 times or 3 s):\n\n" % tuple(
        r["replot"][0]["size"]) + table(["series x points appended", "chart", "points held per series", "median ms", "max ms"], rp)
    main = r["replot"][0]
    lines.append("replot with %d points: median %.2f ms   target < 10 ms: %s"
                 % (main["points_held_per_series"], main["replot_ms_median"], met(main["replot_ms_median"] < 10)))
    r["targets"] = {"gui_at_least_97_percent": ratio >= 0.97, "replot_under_10ms": main["replot_ms_median"] < 10}
    c = r["config"]
    title = ("seed-cnn, %s, batch %d, %s, %d steps per run, %s threads, Qt platform %s"
             % (c["data"], c["batch"], c["optimizer"], c["steps"], a.threads, c["qpa_platform"]))
    return r, title, body, lines


def report_telemetry(a, m):
    r = json.load(open(a.raw))
    r["machine"] = m
    rows = []
    for key, label in (("off", "no sampler"), ("500ms", "sampler every 500 ms (default)"),
                       ("100ms", "sampler every 100 ms")):
        x = r[key]
        rows.append([label, "%.3f" % x["mean_step_ms"], "%.3f" % x["median_step_ms"], x["samples"],
                     "" if key == "off" else "%+.2f %%" % x["overhead_percent"],
                     "" if key == "off" else "%.3f %%" % x["sampler_duty_percent"]])
    body = table(["", "mean step ms", "median step ms", "samples taken", "step-time overhead",
                  "sampler thread duty"], rows)
    lines = ["one sample costs %.3f ms (median of 200, max %.3f ms); GPU source: %s"
             % (r["sample_cost_ms_median"], r["sample_cost_ms_max"], r["config"]["gpu_source"])]
    ok = all(r[k]["overhead_percent"] < 1.0 for k in ("500ms", "100ms"))
    lines.append("overhead target < 1 %% of step time: %s (500 ms: %+.2f %%, 100 ms: %+.2f %%; differences "
                 "within run-to-run noise can be negative)" % (met(ok), r["500ms"]["overhead_percent"],
                                                               r["100ms"]["overhead_percent"]))
    r["targets"] = {"overhead_under_1_percent": ok}
    c = r["config"]
    title = ("seed-cnn, %s, batch %d, %d steps per run, %d rounds in rotating order, %s threads; step time = "
             "median over rounds of each run's mean (first 10 steps dropped)"
             % (c["data"], c["batch"], c["steps"], c["repeat"], a.threads))
    return r, title, body, lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", choices=["cpu", "gui", "telemetry"])
    ap.add_argument("raw")
    ap.add_argument("prefix")
    ap.add_argument("--threads", default="")
    ap.add_argument("--coretype", default="")
    ap.add_argument("--load-before", type=float, default=float("nan"))
    ap.add_argument("--load-after", type=float, default=float("nan"))
    a = ap.parse_args()
    m = machine()
    m["load_before"], m["load_after"] = a.load_before, a.load_after
    res, title, body, lines = {"cpu": report_cpu, "gui": report_gui, "telemetry": report_telemetry}[a.bench](a, m)
    try:
        res["git_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                           cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        pass
    load = "load average %.2f before, %.2f after" % (m["load_before"], m["load_after"])
    md = "## scripts/bench %s (%s)\n\n%s\n\nMachine: %s, %s cores, %s.\n\n%s\n\n%s\n" % (
        a.bench, m["date"], title, m["cpu"], m["cores"], load, body, "\n".join("- " + x for x in lines))
    print()
    print(md)
    with open(a.prefix + ".json", "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    with open(a.prefix + ".md", "w") as f:
        f.write(md)
    out_dir = os.path.dirname(a.prefix)
    for ext in (".json", ".md"):
        shutil.copyfile(a.prefix + ext, os.path.join(out_dir, a.bench + "-latest" + ext))
    print("wrote %s.json and %s.md" % (a.prefix, a.prefix))


if __name__ == "__main__":
    main()
