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


CPU_CONFIGS = [  # name, label, target ratio (None: no PyTorch peer), goal beyond
    ("seed-cnn-b64", "seed-cnn, batch 64", 1.5, None),
    ("resnet-mini-b64", "resnet-mini, batch 64", 1.2, 1.5),
    ("resnet-mini-b256", "resnet-mini, batch 256", 1.2, 1.5),
    ("resnet-deep-b64", "resnet-deep, batch 64", 1.0, None),
]


def _load_runs(d, name, peer):
    runs = []
    for p in sorted(glob.glob(os.path.join(d, "%s-%s-*.json" % (name, peer)))):
        try:
            r = json.load(open(p))
        except (OSError, ValueError):
            continue
        if r.get("images_per_second"):
            runs.append(r)
    return runs


def _med(xs):
    return statistics.median(xs) if xs else float("nan")


def report_cpu(a, m):
    d = a.raw
    rows, lines, res_cfg = [], [], {}
    device = ""
    for name, label, target, goal in CPU_CONFIGS:
        ours, theirs = _load_runs(d, name, "headroom"), _load_runs(d, name, "torch")
        if not ours:
            continue
        device = device or ours[0].get("device", "")
        o_ips = _med([r["images_per_second"] for r in ours])
        o_step = _med([r["median_step_ms"] for r in ours])
        entry = {"headroom_images_per_second": o_ips, "headroom_median_step_ms": o_step,
                 "headroom_runs": [r["images_per_second"] for r in ours]}
        t_ips = ratio = step_ratio = float("nan")
        if theirs:
            t_ips = _med([r["images_per_second"] for r in theirs])
            t_step = _med([r["median_step_ms"] for r in theirs])
            ratio, step_ratio = o_ips / t_ips, t_step / o_step
            entry.update({"pytorch_images_per_second": t_ips, "pytorch_median_step_ms": t_step,
                          "pytorch_runs": [r["images_per_second"] for r in theirs], "ratio": ratio,
                          "ratio_of_median_step_times": step_ratio, "target": target, "met": ratio >= target})
            verdict = met(ratio >= target) + ("" if goal is None else
                                              (" (goal %.1fx: %s)" % (goal, "met" if ratio >= goal else "not yet")))
            lines.append("%s: %.2fx PyTorch (median step times: %.2fx)   target >= %.1fx: %s"
                         % (label, ratio, step_ratio, target, verdict))
        rows.append([label, "%.0f" % o_ips, "%.0f" % t_ips if theirs else "-", "%.2fx" % ratio if theirs else "-",
                     "%.2fx" % step_ratio if theirs else "-", "%d / %d" % (len(ours), len(theirs))])
        res_cfg[name] = entry
    # checkpointing overhead: Headroom runs of resnet-deep with and without --checkpoint all
    plain, ck = _load_runs(d, "resnet-deep-b64", "headroom"), _load_runs(d, "resnet-deep-b64-checkpoint", "headroom")
    if plain and ck:
        s0, s1 = _med([r["median_step_ms"] for r in plain]), _med([r["median_step_ms"] for r in ck])
        a0, a1 = plain[0]["activations_peak_bytes"], ck[0]["activations_peak_bytes"]
        over, cut = s1 / s0 - 1.0, 1.0 - a1 / a0
        res_cfg["checkpoint"] = {"median_step_ms_none": s0, "median_step_ms_all": s1, "overhead": over,
                                 "activations_none_bytes": a0, "activations_all_bytes": a1, "cut": cut,
                                 "met": over <= 0.25}
        rows.append(["resnet-deep, batch 64, --checkpoint all", "%.0f" % _med([r["images_per_second"] for r in ck]),
                     "-", "-", "-", "%d / 0" % len(ck)])
        lines.append("checkpointing (resnet-deep, all blocks): step time %+.1f %% (%.1f -> %.1f ms), activations "
                     "%.1f -> %.1f MiB (%+.1f %%)   target <= +25 %% at a cut of about -70 %%: %s"
                     % (100 * over, s0, s1, a0 / 2 ** 20, a1 / 2 ** 20, -100 * cut, met(over <= 0.25)))
    res = {"bench": "cpu", "machine": m, "threads": a.threads, "openblas_coretype": a.coretype, "device": device,
           "configs": res_cfg}
    # test accuracy after 2 epochs of seed-cnn (headroom train against PyTorch)
    acc_h = os.path.join(d, "accuracy-headroom", "run.json")
    acc_t = os.path.join(d, "accuracy-torch.json")
    if os.path.exists(acc_h):
        h = json.load(open(acc_h))["final"]
        line = "seed-cnn 2 epochs (headroom train): test accuracy %.2f %%, %.0f images/s" % (
            100 * h["test_accuracy"], h["images_per_second"])
        res["accuracy"] = {"headroom": h["test_accuracy"], "headroom_images_per_second": h["images_per_second"]}
        if os.path.exists(acc_t):
            t = json.load(open(acc_t))
            dacc = 100 * (h["test_accuracy"] - t["test_accuracy"])
            line += "; PyTorch %.2f %%, %.0f images/s (%.2fx); difference %+.2f points   target within 1 point: %s" % (
                100 * t["test_accuracy"], t["images_per_second"], h["images_per_second"] / t["images_per_second"],
                dacc, met(abs(dacc) <= 1.0))
            res["accuracy"].update({"pytorch": t["test_accuracy"], "pytorch_images_per_second": t["images_per_second"],
                                    "difference_points": dacc})
        lines.append(line)
    title = ("Fashion-MNIST, SGD lr 0.01 momentum 0.5, %s threads each, OPENBLAS_CORETYPE=%s for both; medians "
             "over alternating rounds; images/s = samples / summed step time (upload, forward, loss, backward, "
             "update); Headroom: %s" % (a.threads, a.coretype or "-", device))
    body = table(["model", "Headroom images/s", "PyTorch images/s", "ratio", "ratio of median step times",
                  "runs (H / T)"], rows)
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
                         if kind == "gui" else "",
                         ("%.2f s (%.1f %% of a core)" % (x["gui_thread_cpu_seconds_per_training_minute"],
                                                        x["gui_thread_cpu_share_percent"]))
                         if kind == "gui" and "gui_thread_cpu_seconds_per_training_minute" in x else ""])
    body = table(["round", "run", "images/s (trainer)", "images/s (wall)", "test accuracy", "charts during run",
                  "GUI thread CPU per minute of run"], rows)
    ratio, wall = r["ratio"], r["wall_ratio"]
    med = r.get("ratio_median_of_rounds", ratio)
    medw = r.get("wall_ratio_median_of_rounds", wall)
    lines = ["GUI / headless images/s (trainer figure), median of %d rounds: %.1f %% (of the means: %.1f %%; wall "
             "clock: median %.1f %%, of the means %.1f %%)   target >= 97 %%: %s"
             % (len(r["runs"]), 100 * med, 100 * ratio, 100 * medw, 100 * wall, met(med >= 0.97))]
    if "gui_thread_cpu_seconds_per_training_minute_median" in r:
        lines.append("GUI thread CPU time per minute of the window's run (getrusage RUSAGE_THREAD, Start to end; "
                     "robust to a busy machine), median of rounds: %.2f s"
                     % r["gui_thread_cpu_seconds_per_training_minute_median"])
    rp = [["%d x %d" % (x["series"], x["points_appended_per_series"]), x.get("variant", ""), x["points_held_per_series"],
           "%.2f" % x["replot_ms_median"], "%.2f" % x["replot_ms_max"]] for x in r["replot"]]
    body += "\n\nReplot of one LiveChart (%dx%d, rescale + rpImmediateRefresh, 50 times or 3 s):\n\n" % tuple(
        r["replot"][0]["size"]) + table(["series x points appended", "chart", "points held per series", "median ms", "max ms"], rp)
    main = r["replot"][0]
    lines.append("replot with %d points: median %.2f ms   target < 10 ms: %s"
                 % (main["points_held_per_series"], main["replot_ms_median"], met(main["replot_ms_median"] < 10)))
    r["targets"] = {"gui_at_least_97_percent": med >= 0.97, "replot_under_10ms": main["replot_ms_median"] < 10}
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
    # A busy machine does not slow both peers alike (PyTorch's OpenMP threads lose far more to other
    # processes than our pool does), so the ratios of such a run say nothing: flag the whole report.
    # The load after includes the benchmark's own threads (one per core when THREADS = cores): only what
    # is left above them is other work.
    threads = float(getattr(a, "threads", 0) or 0)
    busy = max(m["load_before"], m["load_after"] - threads)
    if busy == busy and busy > 1.5:
        res["noisy"] = True
        lines.insert(0, "NOT VALID AS A MEASUREMENT: the machine was busy (1-minute load %.2f > 1.5); the ratios and "
                        "verdicts below are noise. Re-run on a quiet machine." % busy)
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
