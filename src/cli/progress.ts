/**
 * Progress output of `kvlab run` (CLI only): on a terminal, one progress bar per test from the
 * tool's own `rps=… (overall: …)` lines; in a pipe or CI, plain lines: a test's first known
 * rate, then one every 10 s, and `done` (never the tool's `rps=0 (overall: -nan)` start), with
 * the unstored warm-up run kept apart from the measured one. Both show the rate so far
 * (`GET: 54,103 ops/s so far`), never the tool's instantaneous `rps=`: the first partial
 * sample of a test covers a fraction of a second and reads like a collapse. Its overall figure is
 * no better at first (`rps=232.8 (overall: 61000.0)` for a run stored at 39,062; 1,828 while
 * TLS connections are set up, for 21,786), so a rate is shown only once the test has run
 * {@link SETTLE_MS} by kvlab's clock; a shorter test shows `done` alone.
 *
 * @module
 */

import cliProgress from "cli-progress";
import process from "node:process";
import type { ProgressEvent } from "../collect/formats/format.ts";
import type { StudyEvent } from "../collect/plan/study.ts";

/** How the live part of a cell (its tests' progress, a fill) is drawn. */
interface LiveProgress {
  /** A cell starts; a run makes `requests` requests. */
  start(requests: number): void;
  /** An unstored warm-up run starts. */
  warmup(): void;
  /** The tool's own live output. */
  progress(ev: ProgressEvent): void;
  /** A memory fill reached `keys` of `target`. */
  fill(keys: number, target: number): void;
  /** The cell ended. */
  stop(): void;
}

/** Milliseconds between rate lines of one test in a pipe. */
const PIPE_INTERVAL_MS = 10_000;

/**
 * Milliseconds a test runs (from its first progress line, by kvlab's clock) before its rate so
 * far is shown: the tool's first figures cover a fraction of a second, or a connection set-up.
 */
export const SETTLE_MS = 2_000;

const fmt = (n: number | null) => (n === null ? "-" : Math.round(n).toLocaleString("en-US"));

/** Progress bars on stderr, for a terminal. */
function barProgress(now: () => number): LiveProgress {
  let bar: cliProgress.SingleBar | undefined;
  let barTest = "";
  let barStart = 0;
  let requests = 0;
  const stopBar = () => {
    bar?.stop();
    bar = undefined;
  };
  const newBar = (label: string, format: string, options: cliProgress.Options = {}) => {
    stopBar();
    barTest = label;
    bar = new cliProgress.SingleBar({
      format: `  ${label.padEnd(18)} {bar} ${format}`,
      stream: process.stderr,
      hideCursor: true,
      ...options,
    }, cliProgress.Presets.shades_classic);
    return bar;
  };
  return {
    start: (n) => void (requests = n),
    warmup: () => {},
    progress: (ev) => {
      if (ev.kind === "done") {
        if (bar && barTest === ev.test) bar.update(100, {});
        return stopBar();
      }
      if (!bar || barTest !== ev.test) {
        newBar(ev.test, "{percentage}% {overall} ops/s so far", { clearOnComplete: false })
          .start(100, 0, { overall: "-" });
        barStart = now();
      }
      // memtier says its percent; redis-benchmark prints rates, not counts: estimate
      // done = overall rate × elapsed / requests.
      const done = "percent" in ev && typeof ev.percent === "number"
        ? ev.percent / 100
        : ((ev.overallOpsPerSec ?? 0) * (now() - barStart) / 1000) / Math.max(1, requests);
      const settled = now() - barStart >= SETTLE_MS;
      bar!.update(Math.min(99, Math.round(done * 100)), {
        overall: settled ? fmt(ev.overallOpsPerSec) : "-",
      });
    },
    fill: (keys, target) => {
      const label = `fill → ${target.toLocaleString("en-US")}`;
      if (!bar || barTest !== label) {
        newBar(label, "{percentage}% {value}/{total} keys").start(target, keys);
      }
      bar!.update(keys);
      if (keys >= target) stopBar();
    },
    stop: stopBar,
  };
}

/** Plain lines, for a pipe or CI. */
function lineProgress(write: (s: string) => void, now: () => number): LiveProgress {
  let lastLine = 0;
  let afterWarmup = false;
  let shown = "";
  /** The test whose progress is coming, and when its first line came. */
  let current = "";
  let since = 0;
  return {
    start: () => void (shown = current = ""),
    warmup: () => void (afterWarmup = true),
    progress: (ev) => {
      if (afterWarmup) {
        afterWarmup = false;
        write("  measured run:\n");
      }
      if (ev.kind === "done") {
        write(`  ${ev.test}: done\n`);
        shown = current = "";
        return;
      }
      if (ev.test !== current) {
        current = ev.test;
        since = now();
      }
      // `rps=0.0 (overall: -nan)`: the test has only started, nothing is known yet; and the
      // tool's first figures are not yet the test's rate
      if (!ev.opsPerSec || !ev.overallOpsPerSec || now() - since < SETTLE_MS) return;
      if (ev.test !== shown || now() - lastLine >= PIPE_INTERVAL_MS) {
        shown = ev.test;
        lastLine = now();
        write(`  ${ev.test}: ${fmt(ev.overallOpsPerSec)} ops/s so far\n`);
      }
    },
    fill: (keys, target) => {
      if (now() - lastLine >= 1000 || keys === target) {
        lastLine = now();
        write(`  fill: ${keys.toLocaleString("en-US")} / ${target.toLocaleString("en-US")} keys\n`);
      }
    },
    stop: () => {},
  };
}

/**
 * Renders study events as progress.
 *
 * @param write Receives plain text lines (stdout).
 * @param tty Draw bars (on stderr) instead of plain lines.
 * @param now The clock, in ms, that spaces plain lines and settles a test's rate.
 * @returns The event handler for `runPlan`'s `onEvent`.
 */
export function studyProgress(
  write: (s: string) => void,
  tty: boolean,
  now: () => number = Date.now,
): (e: StudyEvent) => void {
  const live = tty ? barProgress(now) : lineProgress(write, now);
  return (e) => {
    switch (e.kind) {
      case "skip":
        write(`[${e.index}/${e.total}] ${e.cell.id}: already complete (run ${e.runId}), skipped\n`);
        break;
      case "start":
        live.start(e.requests);
        write(
          `[${e.index}/${e.total}] ${e.cell.id}\n` +
            (e.before ?? []).map((b) => `  $ ${b.command}   # ${b.what}\n`).join("") +
            `  $ ${e.command}\n`,
        );
        break;
      case "warmup":
        live.warmup();
        write(
          e.what === "preload"
            ? `  preload: writing every key once (not stored)\n`
            : `  warm-up run (not stored)\n`,
        );
        break;
      case "progress":
        live.progress(e.event);
        break;
      case "fill":
        live.fill(e.keys, e.target);
        break;
      case "end": {
        live.stop();
        if (e.run.runId === "" && (e.run.reason ?? "").startsWith("skipped:")) {
          write(`  → not run (${e.run.reason})\n`);
          break;
        }
        const unit = e.cell.id.includes("/memory/") ? "step" : "test";
        write(
          `  → ${e.run.status}: ${e.run.tests} ${unit}${e.run.tests === 1 ? "" : "s"}, ` +
            `run ${e.run.runId}` + (e.run.reason ? ` (${e.run.reason})` : "") + "\n",
        );
        break;
      }
    }
  };
}
