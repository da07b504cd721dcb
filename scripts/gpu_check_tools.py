#!/usr/bin/env python3
"""scripts/gpu-check's helper (standard library only): turns what the checks print into the JSON lines of
OUT/results.jsonl, one a figure, as they come (a cut keeps what ran), and writes the summary at the end.

  qtest CHECK TEST          a Qt Test program's output on stdin -> a line per test function (pass, fail,
                            skip with the reason), per op-diff line (tests/support/op_diff.h), and a last
                            line for the program ("finished" or "cut": its output ended without Totals)
  run CHECK NAME RUN_DIR SAMPLES T0 T1 [HISTORY.sqlite TELEMETRY_OUT]
                            a `headroom train` run: its run.json's figures (accuracy, loss, speed), the
                            planner's, the ledger's and the driver's peak side by side, and Headroom's own
                            telemetry from the run's history (the window's recording path), whose samples are
                            appended to TELEMETRY_OUT
  bench CHECK NAME SAMPLES T0 T1
                            a harness's JSON object on stdin (headroom_gpu_bench, gpu_torch.py,
                            transformer_bench, transformer_reference.py) -> one line, with the driver's view
                            from the call's sampler over the run's window
  line CHECK STATUS [KEY=VALUE ...]
                            one line; a VALUE that reads as JSON (a number, true) is kept as such
  summary RESULTS           the human summary of a results file, on stdout
Every line has "check", "status" (pass, fail, skip, cut, info) and "t" (seconds since the epoch).
Standard library only, and sqlite3 only where a history is read (imported there: a Python whose sqlite3 does not
load, e.g. under a library path with another libsqlite3, still reads and writes every other figure; gpu-check
runs this helper without the pack's library path in any case).
"""
import json
import math
import os
import re
import sys
import time


def emit(obj):
    obj.setdefault("t", round(time.time(), 3))
    sys.stdout.write(json.dumps(obj, sort_keys=False) + "\n")
    sys.stdout.flush()


def clean(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v


# --- the call's sampler (nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total,... -lms N) ------------
SAMPLE_FIELDS = ["timestamp", "index", "memory_used_mib", "memory_total_mib", "power_w", "gpu_util", "mem_util",
                 "temperature_c", "sm_clock_mhz"]


def read_samples(path):
    rows = []
    try:
        f = open(path)
    except OSError:
        return rows
    with f:
        for line in f:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != len(SAMPLE_FIELDS):
                continue
            try:
                ts = parts[0]
                frac = 0.0
                if "." in ts:
                    ts, fs = ts.rsplit(".", 1)
                    frac = float("0." + fs)
                t = time.mktime(time.strptime(ts, "%Y/%m/%d %H:%M:%S")) + frac
            except ValueError:
                continue
            r = {"t": t}
            for k, v in zip(SAMPLE_FIELDS[1:], parts[1:]):
                try:
                    r[k] = float(v)
                except ValueError:
                    r[k] = None
            rows.append(r)
    return rows


def driver_window(samples_path, t0, t1, gpu=0):
    """The driver's view of one run from the call's sampler: memory in use just before the run (the last
    sample before t0) and the largest in use during it, in bytes; power, utilisation, temperature."""
    rows = [r for r in read_samples(samples_path) if int(r.get("index") or 0) == gpu]
    if not rows:
        return {}
    before = [r for r in rows if r["t"] <= t0]
    during = [r for r in rows if t0 <= r["t"] <= t1]
    if not during:
        return {"driver_samples": 0}
    base = before[-1]["memory_used_mib"] if before else during[0]["memory_used_mib"]
    peak = max(r["memory_used_mib"] for r in during if r["memory_used_mib"] is not None)
    mib = 1048576
    out = {"driver_samples": len(during),
           "driver_used_before_bytes": int(base * mib) if base is not None else None,
           "driver_peak_used_bytes": int(peak * mib),
           "driver_process_peak_bytes": int((peak - (base or 0)) * mib)}
    for key, name in (("power_w", "power_w"), ("gpu_util", "gpu_util"), ("temperature_c", "temperature_c")):
        vals = [r[key] for r in during if r.get(key) is not None]
        if vals:
            out[name + "_max"] = max(vals)
            out[name + "_mean"] = round(sum(vals) / len(vals), 1)
    return out


# --- qtest ------------------------------------------------------------------------------------------------------
RESULT = re.compile(r"^(?:\d+: )?(PASS|FAIL!|SKIP|XFAIL|XPASS|BPASS|BFAIL)\s*:\s*(\S+?)::(\w+)\((.*)$")


def split_tag(rest):
    """'tag (with parens)) reason' -> ('tag (with parens)', 'reason'): the data tag ends at the parenthesis
    that closes the function's."""
    depth = 1
    for i, ch in enumerate(rest):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return rest[:i], rest[i + 1:].strip()
    return rest, ""
OPDIFF = re.compile(r"op-diff: (\{.*\})\s*$")
TOTALS = re.compile(r"Totals: (\d+) passed, (\d+) failed, (\d+) skipped")


def cmd_qtest(check, test):
    """Never stops reading before its input ends (the test program writes into the same pipe)."""
    lines = iter(sys.stdin)
    while True:
        try:
            return qtest_lines(check, test, lines)
        except Exception as e:  # noqa: BLE001 - a line it cannot read must not cut the program off
            emit({"check": check, "status": "info", "kind": "tools", "test": test, "reason": "unreadable line: %s" % e})
            for _ in lines:
                pass
            return 0


def qtest_lines(check, test, lines):
    status = {"PASS": "pass", "FAIL!": "fail", "SKIP": "skip", "XFAIL": "pass", "XPASS": "fail", "BPASS": "pass",
              "BFAIL": "fail"}
    totals = None
    last = None
    counts = {"pass": 0, "fail": 0, "skip": 0}
    warning = ""  # the last QWARN (a comparison says there which element differs), given with a failure
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("QWARN"):
            warning = line.split(": ", 1)[-1][:300]
        m = OPDIFF.search(line)
        if m:
            try:
                d = json.loads(m.group(1))
                emit(dict({"check": check, "status": "fail" if d.get("max_rel", 0) > d.get("tol", 1) or d.get("nan")
                           else "pass", "kind": "op-diff", "test": test}, **d))
            except ValueError:
                pass
            continue
        m = RESULT.match(line)
        if m:
            st = status[m.group(1)]
            tag, reason = split_tag(m.group(4))
            fn = m.group(3) + ("(" + tag + ")" if tag else "")
            if fn in ("initTestCase", "cleanupTestCase") and st == "pass":
                continue
            counts[st] += 1
            last = {"check": check, "status": st, "kind": "test", "test": test, "function": fn}
            if reason:
                last["reason"] = reason[:300]
            if st == "fail" and warning:
                last["warning"] = warning
            warning = ""
            if st != "fail":
                emit(last)
                last = None
            continue
        if last is not None and ("Loc: [" in line or line.startswith("   ")):
            emit(last)  # a failure's location follows its line
            last = None
        m = TOTALS.search(line)
        if m:
            totals = [int(x) for x in m.groups()]
    if last is not None:
        emit(last)
    program = {"check": check, "kind": "program", "test": test, "passed": counts["pass"], "failed": counts["fail"],
               "skipped": counts["skip"]}
    if totals is None:
        program.update(status="cut", reason="its output ended before Qt Test's totals (timed out or crashed)")
    else:
        program["status"] = "fail" if totals[1] else ("skip" if totals[0] == 0 and totals[2] else "pass")
    emit(program)
    return 0


# --- run ----------------------------------------------------------------------------------------------------------
def history_telemetry(db, out_path, check, name):
    """Headroom's own telemetry of the run: the rows its history holds (RunController samples NVML through
    core/telemetry's TelemetrySampler, the window's sampler, and RunStore writes them, as for a run in the
    window). Appends the rows to out_path; returns a summary."""
    if not db or not os.path.exists(db):
        return {"telemetry_status": "no history database"}
    try:
        import sqlite3  # here, not at the top: see the top of this file
    except Exception as e:  # noqa: BLE001 - ImportError, or an OSError from the library itself
        return {"telemetry_status": "Python's sqlite3 does not load here (%s): the history was not read" % e}
    try:
        con = sqlite3.connect(db)
        rows = con.execute("SELECT t, step, gpu, gpu_name, gpu_mem_used, gpu_mem_total, power_w, gpu_util, mem_util, "
                           "temperature_c, sm_clock_mhz, energy_j, cpu_util, process_rss FROM telemetry "
                           "ORDER BY t").fetchall()
    except sqlite3.Error as e:
        return {"telemetry_status": "the history could not be read: %s" % e}
    keys = ["t", "step", "gpu", "gpu_name", "gpu_mem_used", "gpu_mem_total", "power_w", "gpu_util", "mem_util",
            "temperature_c", "sm_clock_mhz", "energy_j", "cpu_util", "process_rss"]
    recs = [dict(zip(keys, r)) for r in rows]
    if out_path:
        with open(out_path, "a") as f:
            for r in recs:
                f.write(json.dumps(dict({"check": check, "run": name}, **{k: clean(v) for k, v in r.items()})) + "\n")
    gpu_rows = [r for r in recs if r["gpu"] is not None and r["gpu"] >= 0]
    out = {"telemetry_samples": len(recs), "telemetry_gpu_samples": len(gpu_rows)}
    if gpu_rows:
        for key in ("power_w", "gpu_util", "temperature_c", "gpu_mem_used"):
            vals = [r[key] for r in gpu_rows if r[key] is not None and not (isinstance(r[key], float) and math.isnan(r[key]))]
            if vals:
                out["telemetry_" + key + "_max"] = max(vals)
                out["telemetry_" + key + "_mean"] = round(sum(vals) / len(vals), 1)
        out["telemetry_gpu_name"] = gpu_rows[0]["gpu_name"]
        out["telemetry_status"] = "NVML samples"
    else:
        out["telemetry_status"] = "no GPU samples (NVML absent?)" if recs else "no samples"
    return out


def cmd_run(check, name, run_dir, samples, t0, t1, db=None, telemetry_out=None):
    rec = {"check": check, "kind": "run", "run": name, "seconds": round(float(t1) - float(t0), 1)}
    try:
        r = json.load(open(os.path.join(run_dir, "run.json")))
    except (OSError, ValueError) as e:
        rec.update(status="fail", reason="no run.json (%s)" % e)
        emit(rec)
        return 0
    fin = r.get("final") or {}
    for k in ("test_accuracy", "test_loss", "steps", "images_per_second", "tokens_per_second", "param_count"):
        if fin.get(k) is not None:
            rec[k] = clean(fin[k])
    rec["device"] = r.get("device")
    rec["data"] = (r.get("data") or {}).get("spec")
    rec["data_source"] = (r.get("data") or {}).get("source_dir")
    mem = r.get("memory") or {}
    meas = mem.get("measured") or {}
    pred = mem.get("predicted") or {}
    rec["ledger_peak_bytes"] = meas.get("peak_total", fin.get("peak_bytes"))
    rec["ledger_peak_reserved_bytes"] = meas.get("peak_reserved", fin.get("peak_reserved_bytes"))
    if pred:
        for k in ("device_total", "device_reserved", "device_overhead", "process_total", "communication_overhead"):
            if pred.get(k) is not None:
                rec["planner_" + k + "_bytes"] = pred[k]
    rec.update(driver_window(samples, float(t0), float(t1)))
    rec.update(history_telemetry(db, telemetry_out, check, name))
    rec["status"] = "pass" if r.get("status", "finished") in ("finished", "completed") else "fail"
    if r.get("status"):
        rec["run_status"] = r.get("status")
    emit(rec)
    return 0


# --- bench ----------------------------------------------------------------------------------------------------------
def cmd_bench(check, name, samples, t0, t1):
    text = sys.stdin.read().strip().splitlines()
    obj = None
    for line in reversed(text):
        try:
            obj = json.loads(line)
            break
        except ValueError:
            continue
    rec = {"check": check, "kind": "bench", "run": name, "seconds": round(float(t1) - float(t0), 1)}
    if not isinstance(obj, dict):
        rec.update(status="fail", reason=("no result: " + " | ".join(text[-3:]))[-400:] if text else "no output")
    elif "error" in obj:
        rec.update(status="fail", reason=str(obj.get("error"))[-400:])
    else:
        rec.update({k: clean(v) for k, v in obj.items() if not isinstance(v, (dict, list)) and k != "sample"})
        rec["status"] = "pass"
    rec.update(driver_window(samples, float(t0), float(t1)))
    emit(rec)
    return 0


def cmd_line(check, status, pairs):
    rec = {"check": check, "status": status}
    for p in pairs:
        k, _, v = p.partition("=")
        try:
            rec[k] = json.loads(v)
        except ValueError:
            rec[k] = v
    emit(rec)
    return 0


# --- summary --------------------------------------------------------------------------------------------------------
def mib(b):
    return "-" if b is None else "%.1f MiB" % (b / 1048576.0)


def cmd_summary(path):
    rows = []
    for line in open(path):
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass
    out = []
    checks = []
    for r in rows:
        if r.get("kind") == "check":
            checks.append(r)
    out.append("checks (in the order they ran; each had a slice of one budget):")
    for c in checks:
        out.append("  %-10s %-5s %5ss of %4ss  %s" % (c["check"], c["status"], c.get("seconds", "?"), c.get("slice", "?"),
                                                  c.get("reason", "")))
    ops = [r for r in rows if r.get("kind") == "op-diff"]
    if ops:
        worst = {}
        for r in ops:
            key = (r["op"], r["dtype"])
            if key not in worst or (r.get("max_rel") or 0) > (worst[key].get("max_rel") or 0):
                worst[key] = r
        out.append("")
        out.append("ops: largest difference from the CPU backend (relative to the reference's largest value), %d op/dtype pairs"
                   % len(worst))
        for (op, dt), r in sorted(worst.items()):
            out.append("  %-44s %-10s %9.3g  (tol %g)%s" % (op[:44], dt, r.get("max_rel") or 0, r.get("tol") or 0,
                                                         "  OVER" if r["status"] == "fail" else ""))
    tests = [r for r in rows if r.get("kind") == "program"]
    if tests:
        out.append("")
        out.append("test programs:")
        for r in tests:
            out.append("  %-10s %-22s %-5s %d passed, %d failed, %d skipped %s" % (
                r["check"], r["test"], r["status"], r.get("passed", 0), r.get("failed", 0), r.get("skipped", 0),
                r.get("reason", "")))
    for r in rows:
        if r.get("kind") == "test" and r["status"] in ("fail", "skip"):
            out.append("  %s %s::%s: %s%s" % (r["status"], r["test"], r["function"], r.get("reason", ""),
                                             (" [" + r["warning"] + "]") if r.get("warning") else ""))
    runs = [r for r in rows if r.get("kind") in ("run", "bench")]
    if runs:
        out.append("")
        out.append("runs: step time and memory (planner / ledger / driver; driver = peak in use during the run minus "
                   "in use before it)")
        for r in runs:
            if r["status"] != "pass":
                out.append("  %-32s %s: %s" % (r["run"], r["status"], r.get("reason", "")[:160]))
                continue
            ms = r.get("ms_per_step") or r.get("step_ms")
            if ms:
                speed = "%.2f ms/step" % ms
            elif r.get("tokens_per_second"):
                speed = "%.0f tokens/s" % r["tokens_per_second"]
            elif r.get("images_per_second"):
                speed = "%.0f images/s" % r["images_per_second"]
            else:
                speed = ""
            planner = r.get("planner_device_total_bytes")
            ledger = r.get("peak_ledger_run_bytes") or r.get("ledger_peak_bytes") or r.get("peak_total") \
                or r.get("max_memory_allocated_bytes") or r.get("peak_bytes")
            driver = r.get("driver_peak_bytes")
            driver_kind = "in-process"
            if driver is None:
                driver, driver_kind = r.get("driver_process_peak_bytes"), "process"
            extra = ""
            if r.get("test_accuracy") is not None:
                extra += " acc %.4f" % r["test_accuracy"]
            if r.get("telemetry_gpu_samples"):
                extra += " telemetry %d samples, %.0f W max" % (r["telemetry_gpu_samples"], r.get("telemetry_power_w_max") or 0)
            if driver_kind == "process" and r.get("planner_process_total_bytes") is not None:
                extra = " (planner's process total %s)%s" % (mib(r["planner_process_total_bytes"]), extra)
            out.append("  %-32s %-16s planner %-12s ledger %-12s driver (%s) %s%s" % (
                r["run"][:32], speed, mib(planner), mib(ledger), driver_kind, mib(driver), extra))
    left = [r for r in rows if r.get("kind") == "check" and r["status"] in ("fail", "skip", "cut")]
    out.append("")
    out.append("%d of %d checks passed" % (len(checks) - len(left), len(checks)))
    print("\n".join(out))
    return 0


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "qtest":
        return cmd_qtest(*args[:2])
    if cmd == "run":
        return cmd_run(*args)
    if cmd == "bench":
        return cmd_bench(*args[:5])
    if cmd == "line":
        return cmd_line(args[0], args[1], args[2:])
    if cmd == "summary":
        return cmd_summary(args[0])
    sys.stderr.write("gpu_check_tools.py: unknown command %s\n" % cmd)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
