/**
 * The process edges every command shares: where output goes, SIGINT/SIGTERM/SIGHUP turned into
 * an abort signal, and outcomes turned into exit codes (130 interrupted, 129 hung up, 2 the
 * command line is wrong, 1 failed, 0 otherwise).
 *
 * @module
 */

import { CommanderError } from "commander";

/** Where a command writes: `print` is stdout, `printErr` is stderr. */
export interface Output {
  /** Receives what goes to stdout. */
  print: (s: string) => void;
  /** Receives what goes to stderr. */
  printErr: (s: string) => void;
  /**
   * Whether stdout is a terminal: tables are then aligned text (unless `--format` says
   * otherwise) and progress draws bars.
   * @default {false}
   */
  isTerminal?: boolean;
}

/**
 * A command line that is wrong: an option value kvlab cannot read (`--format xml`, `--interval
 * abc`, an unknown plot kind). Exits with 2, like commander's own usage errors.
 */
export class UsageError extends TypeError {
  /** @param message What is wrong, e.g. `invalid format: xml (expected md, csv, json or text)`. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Reads a command's options; whatever that throws is a {@link UsageError}.
 *
 * @param read Reads and checks the options (nothing else: no data is read yet).
 * @returns What `read` returns.
 * @throws {UsageError} With the message of what `read` threw.
 *
 * @example
 * ```ts
 * import { readOptions, UsageError } from "./_exit.ts";
 * import assert from "node:assert/strict";
 * assert.equal(readOptions(() => 1), 1);
 * assert.throws(() => readOptions(() => { throw new TypeError("invalid format: xml"); }), UsageError);
 * ```
 */
export function readOptions<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    throw e instanceof UsageError ? e : new UsageError((e as Error).message);
  }
}

/**
 * The signals that stop a long command cleanly. SIGHUP (a dropped SSH session) is one: the
 * running tool is stopped and its partial run stored, as for SIGTERM.
 */
const STOP_SIGNALS: Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * Runs `fn` with an abort signal that SIGINT, SIGTERM or SIGHUP trips (its `reason` is the
 * signal's name, see {@link stopSignalOf}); the listeners are removed when `fn` settles.
 *
 * @param fn The work; it should stop soon after the signal aborts.
 * @returns What `fn` returns.
 *
 * @example
 * ```ts
 * import { withStopSignals } from "./_exit.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await withStopSignals((signal) => Promise.resolve(signal.aborted)), false);
 * ```
 */
export async function withStopSignals<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const listeners = STOP_SIGNALS.map((s) => [s, () => ac.abort(s)] as const);
  for (const [s, on] of listeners) Deno.addSignalListener(s, on);
  try {
    return await fn(ac.signal);
  } finally {
    for (const [s, on] of listeners) Deno.removeSignalListener(s, on);
  }
}

/**
 * The stop signal that tripped an abort signal of {@link withStopSignals}.
 *
 * @param signal The abort signal.
 * @returns `"SIGINT"`, `"SIGTERM"` or `"SIGHUP"`, or undefined when it was not tripped by one.
 *
 * @example
 * ```ts
 * import { stopSignalOf } from "./_exit.ts";
 * import assert from "node:assert/strict";
 * const ac = new AbortController();
 * assert.equal(stopSignalOf(ac.signal), undefined);
 * ac.abort("SIGHUP");
 * assert.equal(stopSignalOf(ac.signal), "SIGHUP");
 * ```
 */
export function stopSignalOf(signal: AbortSignal): Deno.Signal | undefined {
  const r = signal.aborted ? signal.reason : undefined;
  return STOP_SIGNALS.find((s) => s === r);
}

/**
 * Ends the command with a non-zero exit code; whatever explains it was printed already.
 *
 * @param code The exit code.
 * @param command The command's name, e.g. `"ingest"`.
 * @throws {CommanderError} Always.
 *
 * @example
 * ```ts
 * import { exitWith } from "./_exit.ts";
 * import assert from "node:assert/strict";
 * assert.throws(() => exitWith(1, "ingest"), { exitCode: 1, code: "kvlab.ingest" });
 * ```
 */
export function exitWith(code: number, command: string): never {
  throw new CommanderError(code, `kvlab.${command}`, "");
}

/** The counts of a study that decide its exit code. */
export interface StudyOutcome {
  /** A signal stopped the study. */
  interrupted: boolean;
  /** Cells that failed. */
  failed: number;
  /** Cells whose tool did not finish every test. */
  incomplete: number;
  /** The signal that stopped it, when one did: SIGHUP exits with 129. */
  stopSignal?: string;
}

/**
 * Ends a study command with 130 when it was interrupted (129 when by SIGHUP, as a shell
 * reports a hung-up command), 1 when a cell failed or is incomplete, and returns otherwise.
 *
 * @param result The study's counts.
 * @param command The command's name, e.g. `"run"`.
 * @throws {CommanderError} With exit code 130 or 1.
 *
 * @example
 * ```ts
 * import { exitForStudy } from "./_exit.ts";
 * import assert from "node:assert/strict";
 * exitForStudy({ interrupted: false, failed: 0, incomplete: 0 }, "run");
 * assert.throws(
 *   () => exitForStudy({ interrupted: true, failed: 1, incomplete: 0 }, "run"),
 *   { exitCode: 130 },
 * );
 * assert.throws(
 *   () => exitForStudy({ interrupted: false, failed: 0, incomplete: 2 }, "demo"),
 *   { exitCode: 1, code: "kvlab.demo" },
 * );
 * ```
 */
export function exitForStudy(result: StudyOutcome, command: string): void {
  if (result.interrupted) exitWith(result.stopSignal === "SIGHUP" ? 129 : 130, command);
  if (result.failed > 0 || result.incomplete > 0) exitWith(1, command);
}

/**
 * The exit code for what a command threw: 2 for a usage error (commander's own, whose message
 * it printed already, or a {@link UsageError}), a kvlab {@link CommanderError}'s own code (help
 * and version are 0), otherwise 1 after printing `error: <message>`.
 *
 * @param error What the command threw.
 * @param printErr Receives the error line.
 * @returns The process exit code.
 *
 * @example
 * ```ts
 * import { exitCodeFor, UsageError } from "./_exit.ts";
 * import { CommanderError } from "commander";
 * import assert from "node:assert/strict";
 * let err = "";
 * assert.equal(exitCodeFor(new Error("disk full"), (s) => err += s), 1);
 * assert.equal(err, "error: disk full\n");
 * assert.equal(exitCodeFor(new UsageError("invalid format: xml"), () => {}), 2);
 * assert.equal(exitCodeFor(new CommanderError(1, "commander.unknownOption", ""), () => {}), 2);
 * assert.equal(exitCodeFor(new CommanderError(0, "commander.version", ""), () => {}), 0);
 * assert.equal(exitCodeFor(new CommanderError(130, "kvlab.run", ""), () => {}), 130);
 * ```
 */
export function exitCodeFor(error: unknown, printErr: (s: string) => void): number {
  if (error instanceof CommanderError) {
    return error.code.startsWith("commander.") && error.exitCode !== 0 ? 2 : error.exitCode;
  }
  printErr(`error: ${(error as Error).message}\n`);
  if (error instanceof UsageError) {
    printErr("(see kvlab --help, or kvlab <command> --help)\n");
    return 2;
  }
  return 1;
}
