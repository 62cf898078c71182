/**
 * The `kvlab` command line: the registry of its commands and the program that runs them. Each
 * command is one handler module under `src/cli/` holding all of it: `declareX()` names the
 * command, its arguments, options and help; `xOptions()` reads commander's values into a typed
 * `XCommandOptions`; `xCommand()` does the work. {@link COMMANDS} lists the declarations in the
 * order `kvlab --help` shows them, as `PLOTS` lists the plot kinds and `PLAN_KINDS` the plan
 * kinds: a new command is a handler module and one line there. Run `deno task kvlab --help`.
 *
 * @module
 */

import { Command } from "commander";
import pl from "nodejs-polars";
import { KVLAB_VERSION } from "./version.ts";
import { redactText } from "./text/redact.ts";
import { terminalText } from "./text/safe.ts";
import { exitCodeFor, type Output } from "./cli/_exit.ts";
import { declareAgent } from "./cli/agent.ts";
import { declareChanges } from "./cli/changes.ts";
import { declareCompact } from "./cli/compact.ts";
import { declareCompare } from "./cli/compare.ts";
import { declareData } from "./cli/data.ts";
import { declareDelta } from "./cli/delta.ts";
import { declareDemo } from "./cli/demo.ts";
import { declareDoctor } from "./cli/doctor.ts";
import { declareIngest } from "./cli/ingest.ts";
import { declareLoad } from "./cli/load.ts";
import { declareNodes } from "./cli/nodes.ts";
import { declarePlot } from "./cli/plot.ts";
import { declarePubSub } from "./cli/pubsub.ts";
import { declareReport } from "./cli/report.ts";
import { declareRun } from "./cli/run.ts";
import { declareSample } from "./cli/sample.ts";
import { declareFailover } from "./cli/failover.ts";
import { declareSummary } from "./cli/summary.ts";
import { declareSweep } from "./cli/sweep.ts";
import { declareTable } from "./cli/table.ts";

/** Every command, in the order `kvlab --help` lists them: one declaration each. */
const COMMANDS: ((program: Command, out: Output) => void)[] = [
  declareIngest,
  declareTable,
  declareData,
  declareReport,
  declareCompare,
  declareDelta,
  declareNodes,
  declareChanges,
  declarePlot,
  declareSummary,
  declareRun,
  declareSample,
  declareDemo,
  declareDoctor,
  declareCompact,
  declarePubSub,
  declareFailover,
  declareSweep,
  declareLoad,
  declareAgent,
];

/** Options of {@link buildCli}. */
export interface BuildCliOptions {
  /**
   * Whether stdout is a terminal (tables as aligned text, progress bars).
   * @default {false}
   */
  isTerminal?: boolean;
  /**
   * Receives commander's own stdout (help and --version): kvlab's fixed text, which the
   * redaction of `print` would garble (`redis://[user:password@]host` is not a credential).
   * @default {print}
   */
  printHelp?: (s: string) => void;
}

/**
 * What `kvlab --version` prints: kvlab's version and the Deno it runs on.
 *
 * @returns e.g. `kvlab 0.1.0 (deno 2.9.6)`.
 *
 * @example
 * ```ts
 * import { versionText } from "./cli.ts";
 * import assert from "node:assert/strict";
 * assert.match(versionText(), /^kvlab \d+\.\d+\.\d+ \(deno \d+\.\d+\.\d+\)$/);
 * ```
 */
export function versionText(): string {
  return `kvlab ${KVLAB_VERSION} (deno ${Deno.version.deno})`;
}

/**
 * Builds the command tree.
 *
 * @param print Receives what goes to stdout.
 * @param printErr Receives what goes to stderr.
 * @param options Whether stdout is a terminal.
 * @returns The commander program; run it with `parseAsync`.
 *
 * @example
 * ```ts
 * import { buildCli } from "./cli.ts";
 * import assert from "node:assert/strict";
 * let out = "";
 * const cli = buildCli((s) => out += s, () => {});
 * await assert.rejects(cli.parseAsync(["--help"], { from: "user" }), { exitCode: 0 });
 * assert.match(out, /Usage: kvlab/);
 * await assert.rejects(buildCli(() => {}, () => {}).parseAsync(["--nope"], { from: "user" }), {
 *   code: "commander.unknownOption",
 * });
 * ```
 */
export function buildCli(
  print: (s: string) => void,
  printErr: (s: string) => void,
  options: BuildCliOptions = {},
): Command {
  const program = new Command("kvlab")
    .description(
      "Collect, ingest and analyze Redis-family benchmark results. Exit codes: 0 done, 1 failed, " +
        "2 usage error, 129 hung up (SIGHUP), 130 interrupted.",
    )
    .version(versionText(), "-V, --version", "print kvlab's and Deno's versions")
    .exitOverride()
    .configureOutput({ writeOut: options.printHelp ?? print, writeErr: printErr })
    // one line after an error (the suggestion stays visible), not the whole help
    .showHelpAfterError("(kvlab --help lists the commands; kvlab <command> --help their options)");

  const out: Output = { print, printErr, isTerminal: options.isTerminal ?? false };
  for (const declare of COMMANDS) declare(program, out);
  for (const command of program.commands) {
    command.showHelpAfterError(`(kvlab ${command.name()} --help lists its options)`);
    // commander does not mark required options in help: say it
    for (const option of command.options) {
      if (option.mandatory) option.description = `${option.description} (required)`;
    }
  }
  return program;
}

if (import.meta.main) {
  // Everything kvlab prints leaves the process here: redacted once, control characters shown
  // (text from datasets and servers is untrusted), written whole.
  const enc = new TextEncoder();
  // A reader that goes away (`kvlab table … | head -c 100`) ends what is shown, not the work:
  // later output to that stream is dropped, the command finishes (so a run being stored is
  // stored) and exits as it would have, with no "Broken pipe" error.
  const closed = new Set<unknown>();
  const writeAll = (w: { writeSync(b: Uint8Array): number }, text: string) => {
    if (closed.has(w)) return;
    const bytes = enc.encode(text);
    try {
      for (let off = 0; off < bytes.length;) off += w.writeSync(bytes.subarray(off));
    } catch (e) {
      if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
      closed.add(w);
    }
  };
  const print = (s: string) => writeAll(Deno.stdout, terminalText(redactText(s)));
  const printErr = (s: string) => writeAll(Deno.stderr, terminalText(redactText(s)));
  const printHelp = (s: string) => writeAll(Deno.stdout, s);
  pl.Config.setTblRows(50);
  try {
    await buildCli(print, printErr, { isTerminal: Deno.stdout.isTerminal(), printHelp })
      .parseAsync(Deno.args, { from: "user" });
  } catch (e) {
    Deno.exit(exitCodeFor(e, printErr));
  }
}
