/**
 * Progress output of `kvlab run` (CLI only): on a terminal, one progress bar per test from the
 * tool's own `rps=… (overall: …)` lines; in a pipe or CI, plain lines.
 *
 * @module
 */

import cliProgress from "cli-progress";
import process from "node:process";
import type { StudyEvent } from "../collect/study.ts";

/** Renders study events; `write` receives plain text lines. */
export function studyProgress(write: (s: string) => void, tty: boolean): (e: StudyEvent) => void {
  let bar: cliProgress.SingleBar | undefined;
  let barTest = "";
  let barStart = 0;
  let requests = 0;
  let lastLine = 0;
  const fmt = (n: number | null) => (n === null ? "-" : Math.round(n).toLocaleString("en-US"));
  const stopBar = () => {
    bar?.stop();
    bar = undefined;
  };
  return (e) => {
    switch (e.kind) {
      case "skip":
        write(`[${e.index}/${e.total}] ${e.cell.id}: already complete (run ${e.runId}), skipped\n`);
        break;
      case "start":
        requests = e.requests;
        write(`[${e.index}/${e.total}] ${e.cell.id}\n  $ ${e.command}\n`);
        break;
      case "warmup":
        write(`  warm-up run (not stored)\n`);
        break;
      case "progress": {
        const ev = e.event;
        if (tty) {
          if (ev.kind === "progress") {
            if (!bar || barTest !== ev.test) {
              stopBar();
              barTest = ev.test;
              bar = new cliProgress.SingleBar({
                format: `  ${ev.test.padEnd(18)} {bar} {percentage}% {rps} rps (overall {overall})`,
                stream: process.stderr,
                hideCursor: true,
                clearOnComplete: false,
              }, cliProgress.Presets.shades_classic);
              bar.start(100, 0, { rps: "-", overall: "-" });
              barStart = Date.now();
            }
            // memtier says its percent; redis-benchmark prints rates, not counts: estimate
            // done = overall rate × elapsed / requests.
            const done = "percent" in ev && typeof ev.percent === "number"
              ? ev.percent / 100
              : ((ev.overallOpsPerSec ?? 0) * (Date.now() - barStart) / 1000) /
                Math.max(1, requests);
            bar.update(Math.min(99, Math.round(done * 100)), {
              rps: fmt(ev.opsPerSec),
              overall: fmt(ev.overallOpsPerSec),
            });
          } else {
            if (bar && barTest === ev.test) bar.update(100, {});
            stopBar();
          }
        } else {
          const now = Date.now();
          if (ev.kind === "done") write(`  ${ev.test}: done\n`);
          else if (now - lastLine >= 1000) {
            lastLine = now;
            write(
              `  ${ev.test}: rps=${fmt(ev.opsPerSec)} (overall: ${fmt(ev.overallOpsPerSec)})\n`,
            );
          }
        }
        break;
      }
      case "fill": {
        if (tty) {
          const label = `fill → ${e.target.toLocaleString("en-US")}`;
          if (!bar || barTest !== label) {
            stopBar();
            barTest = label;
            bar = new cliProgress.SingleBar({
              format: `  ${label.padEnd(18)} {bar} {percentage}% {value}/{total} keys`,
              stream: process.stderr,
              hideCursor: true,
            }, cliProgress.Presets.shades_classic);
            bar.start(e.target, e.keys);
          }
          bar.update(e.keys);
          if (e.keys >= e.target) stopBar();
          break;
        }
        const now = Date.now();
        if (now - lastLine >= 1000 || e.keys === e.target) {
          lastLine = now;
          write(
            `  fill: ${e.keys.toLocaleString("en-US")} / ${
              e.target.toLocaleString("en-US")
            } keys\n`,
          );
        }
        break;
      }
      case "end":
        stopBar();
        write(
          `  → ${e.run.status}: ${e.run.tests} ${e.cell.id.includes("/memory/") ? "step" : "test"}${
            e.run.tests === 1 ? "" : "s"
          }, run ${e.run.runId}` +
            (e.run.reason ? ` (${e.run.reason})` : "") + "\n",
        );
        break;
    }
  };
}
