"""Turns the raw results of one scripts/bench run into a table on stdout and PREFIX.json / PREFIX.md
(plus NAME-latest.json / .md next to them). Standard library only.

usage: bench_report.py cpu RUN_DIR PREFIX [--threads T] [--coretype C] [--load-after L] [--max-load 0.5]
       [--train-limit N] [--steps-gpt N]
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


CPU_CONFIGS = [  # name, label, unit, target ratio, goal beyond
    ("seed-cnn-b64", "seed-cnn, batch 64", "images", 2.0, None),
    ("resnet-mini-b64", "resnet-mini, batch 64", "images", 1.2, 1.5),
    ("resnet-mini-b256", "resnet-mini, batch 256", "images", 1.2, 1.5),
    ("resnet-deep-b64", "resnet-deep, batch 64", "images", 1.2, 1.5),
    ("gpt-char", "gpt-char, batch 8, T 256", "tokens", 1.2, 1.5),
    ("llama-tiny", "llama-tiny, batch 16, T 128", "tokens", 1.5, None),
]


def _load_round(d, name, peer, r):
    p = os.path.join(d, "%s-%s-%d.json" % (name, peer, r))
    try:
        x = json.load(open(p))
    except (OSError, ValueError):
        return None
    return x if x.get("loop_seconds") else None


def _rate(x, unit):
    return x.get("loop_%s_per_second" % unit, float("nan"))


def _step_ms(x):
    return x.get("median_step_ms", x.get("step_ms_median", float("nan")))


def _med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def _rounds(d):
    out = []
    try:
        for line in open(os.path.join(d, "rounds.txt")):
            r, load = line.split()
            out.append((int(r), float(load)))
    except (OSError, ValueError):
        pass
    return out


def _gemm(d, rounds):
    """The machine's GEMM rates of this run: per peer and dtype the median over rounds of each round's best call
    (GFLOP/s), and per dtype the best of the two peers (the machine's rate the shares are of)."""
    out = {"headroom": {}, "pytorch": {}, "machine": {}, "flags": [], "torch_bf16_instructions": None}
    for peer, key in (("headroom", "headroom"), ("torch", "pytorch")):
        xs = []
        for r, _ in rounds:
            try:
                xs.append(json.load(open(os.path.join(d, "gemm-%s-%d.json" % (peer, r)))))
            except (OSError, ValueError):
                pass
        for dt in ("f32", "bf16"):
            v = _med([x[dt]["best_gflops"] for x in xs if dt in x])
            if v == v:
                out[key][dt] = v
        if xs and peer == "headroom":
            out["flags"] = xs[0].get("cpu_flags", [])
        if xs and peer == "torch":
            out["torch_bf16_instructions"] = xs[0].get("mkldnn_bf16")
    for dt in ("f32", "bf16"):
        vs = [out[k][dt] for k in ("headroom", "pytorch") if dt in out[k]]
        if vs:
            out["machine"][dt] = max(vs)
    return out


def _flops_per_unit(x, unit):
    return x.get("flops_per_image" if unit == "images" else "flops_per_token", float("nan"))


def report_cpu(a, m):
    d = a.raw
    rounds = _rounds(d)
    gemm = _gemm(d, rounds)
    share_rows = []
    loud = [(r, l) for r, l in rounds if l > a.max_load]
    rows, lines, res_cfg, per_round = [], [], {}, []
    device = ""
    for name, label, unit, target, goal in CPU_CONFIGS:
        ours = {r: _load_round(d, name, "headroom", r) for r, _ in rounds}
        theirs = {r: _load_round(d, name, "torch", r) for r, _ in rounds}
        ours = {r: x for r, x in ours.items() if x}
        theirs = {r: x for r, x in theirs.items() if x}
        if not ours:
            continue
        device = device or ours[min(ours)].get("device", "")
        o_rate = _med([_rate(x, unit) for x in ours.values()])
        o_step = _med([_step_ms(x) for x in ours.values()])
        entry = {"unit": unit + "/s", "headroom_loop_rate": o_rate, "headroom_median_step_ms": o_step,
                 "headroom_rounds": {str(r): _rate(x, unit) for r, x in ours.items()}}
        t_rate = t_step = ratio = step_ratio = float("nan")
        if theirs:
            t_rate = _med([_rate(x, unit) for x in theirs.values()])
            t_step = _med([_step_ms(x) for x in theirs.values()])
            ratio, step_ratio = o_rate / t_rate, t_step / o_step
            entry.update({"pytorch_loop_rate": t_rate, "pytorch_median_step_ms": t_step,
                          "pytorch_rounds": {str(r): _rate(x, unit) for r, x in theirs.items()},
                          "ratio_of_medians": ratio, "ratio_of_median_step_times": step_ratio, "target": target})
            if not loud:
                entry["met"] = ratio >= target
                verdict = met(ratio >= target) + ("" if goal is None else
                                                  (" (goal %.1fx: %s)" % (goal, "met" if ratio >= goal else "not yet")))
                lines.append("%s: %.2fx PyTorch (median step times: %.2fx)   target >= %.1fx: %s"
                             % (label, ratio, step_ratio, target, verdict))
        for r in sorted(ours):
            o, t = _rate(ours[r], unit), _rate(theirs[r], unit) if r in theirs else float("nan")
            per_round.append([str(r), label, "%.0f" % o, "%.0f" % t if t == t else "-",
                              "%.2fx" % (o / t) if t == t else "-"])
        show = lambda v, f: f % v if v == v and not loud else "-"  # noqa: E731
        rows.append([label, unit + "/s", "%.0f" % o_rate, "%.0f" % t_rate if theirs else "-",
                     show(ratio, "%.2fx"), "%.1f / %s" % (o_step, "%.1f" % t_step if theirs else "-"),
                     "%d / %d" % (len(ours), len(theirs))])
        # work per second (the planner's FLOPs per sample, the same count for both) against the machine's GEMM rates
        fpu = _med([_flops_per_unit(x, unit) for x in ours.values()])
        if fpu == fpu and gemm["machine"].get("f32"):
            g_o, g_t = o_rate * fpu / 1e9, (t_rate * fpu / 1e9 if theirs else float("nan"))
            f32, bf16 = gemm["machine"]["f32"], gemm["machine"].get("bf16", float("nan"))
            entry.update({"flops_per_sample": fpu, "headroom_gflops": g_o, "pytorch_gflops": g_t,
                          "headroom_share_of_f32_gemm": g_o / f32, "pytorch_share_of_f32_gemm": g_t / f32,
                          "headroom_share_of_bf16_gemm": g_o / bf16, "pytorch_share_of_bf16_gemm": g_t / bf16})
            pct = lambda v: "%.0f %%" % (100 * v) if v == v else "-"  # noqa: E731
            share_rows.append([label, "%.3g" % (fpu / 1e6), "%.1f" % g_o, "%.1f" % g_t if g_t == g_t else "-",
                               pct(g_o / f32), pct(g_t / f32), pct(g_o / bf16), pct(g_t / bf16)])
        res_cfg[name] = entry
    # checkpointing overhead: Headroom runs of resnet-deep with and without --checkpoint all
    plain = [x for x in (_load_round(d, "resnet-deep-b64", "headroom", r) for r, _ in rounds) if x]
    ck = [x for x in (_load_round(d, "resnet-deep-b64-checkpoint", "headroom", r) for r, _ in rounds) if x]
    if plain and ck:
        s0, s1 = _med([x["loop_seconds"] for x in plain]), _med([x["loop_seconds"] for x in ck])
        a0, a1 = plain[0]["activations_peak_bytes"], ck[0]["activations_peak_bytes"]
        over, cut = s1 / s0 - 1.0, 1.0 - a1 / a0
        res_cfg["checkpoint"] = {"loop_seconds_none": s0, "loop_seconds_all": s1, "overhead": over,
                                 "activations_none_bytes": a0, "activations_all_bytes": a1, "cut": cut}
        rows.append(["resnet-deep, batch 64, --checkpoint all", "images/s",
                     "%.0f" % _med([x["loop_images_per_second"] for x in ck]), "-", "-", "-", "%d / 0" % len(ck)])
        if not loud:
            res_cfg["checkpoint"]["met"] = over <= 0.25
            lines.append("checkpointing (resnet-deep, all blocks): training loop %+.1f %% (%.1f -> %.1f s), activations "
                         "%.1f -> %.1f MiB (%+.1f %%)   target <= +25 %% at a cut of about -70 %%: %s"
                         % (100 * over, s0, s1, a0 / 2 ** 20, a1 / 2 ** 20, -100 * cut, met(over <= 0.25)))
    res = {"bench": "cpu", "machine": m, "threads": a.threads, "openblas_coretype": a.coretype, "device": device,
           "rounds": [{"round": r, "load_before": l} for r, l in rounds], "max_load": a.max_load,
           "train_limit": a.train_limit, "configs": res_cfg, "gemm": gemm}
    if loud:
        res["refused"] = True
        lines.insert(0, "NOT REPORTED: the 1-minute load average before %s was above %.2f after waiting for it to fall "
                        "(%s): another program was using the machine, so the ratios would measure it, not the two "
                        "programs. Stop what else runs and re-run; the rounds' figures are listed, without ratios."
                     % (", ".join("round %d" % r for r, _ in loud), a.max_load,
                        ", ".join("%.2f" % l for _, l in loud)))
    if a.train_limit:
        lines.insert(0, "Partial epochs: TRAIN_LIMIT=%d images per epoch instead of 60,000." % a.train_limit)
    # test accuracy after 2 epochs of seed-cnn (headroom train against PyTorch)
    acc_h = os.path.join(d, "accuracy-headroom", "run.json")
    acc_t = os.path.join(d, "accuracy-torch.json")
    if os.path.exists(acc_h):
        h = json.load(open(acc_h))["final"]
        line = "seed-cnn 2 epochs (headroom train): test accuracy %.2f %%" % (100 * h["test_accuracy"])
        res["accuracy"] = {"headroom": h["test_accuracy"]}
        if os.path.exists(acc_t):
            t = json.load(open(acc_t))
            dacc = 100 * (h["test_accuracy"] - t["test_accuracy"])
            line += "; PyTorch %.2f %%; difference %+.2f points   target within 1 point: %s" % (
                100 * t["test_accuracy"], dacc, met(abs(dacc) <= 1.0))
            res["accuracy"].update({"pytorch": t["test_accuracy"], "difference_points": dacc})
        lines.append(line)
    title = ("Fashion-MNIST, one epoch%s per round, SGD lr 0.01 momentum 0.5; gpt-char %d steps, AdamW; %s threads "
             "each (PyTorch: OMP_NUM_THREADS), OPENBLAS_CORETYPE=%s and OPENBLAS_NUM_THREADS=1 for both; rate = "
             "samples / wall time of the whole training loop; ratio of the medians over %d alternating rounds; "
             "Headroom: %s" % (" of %d images" % a.train_limit if a.train_limit else "", a.steps_gpt, a.threads,
                               a.coretype or "-", len(rounds), device))
    body = table(["model", "unit", "Headroom", "PyTorch", "ratio of medians", "median step ms (H / P)",
                  "rounds (H / P)"], rows)
    if gemm["machine"]:
        fmt = lambda k, dt: "%.1f" % gemm[k][dt] if dt in gemm[k] else "-"  # noqa: E731
        flags = gemm["flags"]
        body += ("\n\nThe machine's GEMM rate in this run (2048² matmul, GFLOP/s, median over rounds of each round's "
                 "best call; CPU flags: %s%s; PyTorch's bf16 instructions (oneDNN): %s):\n\n"
                 % (" ".join(flags) or "-",
                    "" if "avx512f" in flags else " (no AVX-512)",
                    {True: "yes", False: "no", None: "-"}[gemm["torch_bf16_instructions"]]))
        body += table(["", "f32", "bf16"],
                      [["Headroom's backend (OpenBLAS sgemm; bf16 converted to f32 around it)", fmt("headroom", "f32"),
                        fmt("headroom", "bf16")],
                       ["PyTorch torch.matmul", fmt("pytorch", "f32"), fmt("pytorch", "bf16")],
                       ["the machine's rate (the better of the two)", fmt("machine", "f32"), fmt("machine", "bf16")]])
    if share_rows:
        body += ("\n\nShare of the machine (GFLOP/s = the planner's FLOPs per sample, forward + backward, × the median "
                 "rate; the configurations run in fp32):\n\n")
        body += table(["model", "MFLOP per sample", "Headroom GFLOP/s", "PyTorch GFLOP/s", "Headroom / f32 GEMM",
                       "PyTorch / f32 GEMM", "Headroom / bf16 GEMM", "PyTorch / bf16 GEMM"], share_rows)
    body += "\n\nEvery round (load average before it: %s):\n\n" % ", ".join("%d: %.2f" % (r, l) for r, l in rounds)
    body += table(["round", "model", "Headroom", "PyTorch", "ratio"], per_round)
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
    ap.add_argument("--max-load", type=float, default=0.5)
    ap.add_argument("--train-limit", type=int, default=0)
    ap.add_argument("--steps-gpt", type=int, default=0)
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
    # the cpu bench waits for a quiet machine before each of its rounds and judges those loads itself
    if busy == busy and busy > 1.5 and not res.get("rounds"):
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
