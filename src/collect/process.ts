/**
 * Running tools as processes: an argv array (never a shell string), stdout and stderr streamed
 * to callbacks and to files as they arrive, a timeout, and a stop signal (Ctrl-C / SIGTERM)
 * that ends the child and keeps what it printed. The {@link ProcessRunner} interface is what
 * collectors take, so tests can hand them a fake.
 *
 * Children die with kvlab. Each starts in its own process group and session (`detached`), so a
 * Ctrl-C or a hang-up reaches kvlab alone, which then stops the whole group (the tool and
 * anything it started) on every way out: the stop signal, the timeout, an error while its
 * output is written (a full disk), and kvlab's own exit. Where util-linux `setpriv` is
 * installed, the child also gets `--pdeathsig KILL`: the kernel kills it when kvlab dies, even
 * by `kill -9`. With {@link DenoProcessRunnerOptions.pidDir}, a pid file per running child
 * (`<pid>.json`: pid, start time, program, kvlab's pid and start time, host) lets the next run
 * find and stop a child whose kvlab died without `setpriv` (see `store/locks.ts`).
 *
 * @module
 */

import { diskFullAt } from "../system/disk.ts";
import { type ChildPidFile, hostName, killGroup, processStart } from "../system/pids.ts";

export type { ChildPidFile };

export { DiskFullError } from "../system/disk.ts";

/** The tool to run was not found (not on PATH, or not executable). */
export class ToolNotFoundError extends Error {
  /** @param tool The program that could not be started. */
  constructor(readonly tool: string) {
    super(`${tool}: not found on PATH (install it, or give its path)`);
    this.name = "ToolNotFoundError";
  }
}

/** What to run. */
export interface RunProcessOptions {
  /** Program and arguments. */
  argv: readonly string[];
  /** Hard limit; the child gets SIGTERM, then SIGKILL 2 s later. */
  timeoutMs: number;
  /** Called with each chunk of stdout as it arrives. */
  onStdout?: (chunk: Uint8Array) => void;
  /** Called with each chunk of stderr as it arrives. */
  onStderr?: (chunk: Uint8Array) => void;
  /** Write stdout to this file as it arrives (created, must not exist). */
  stdoutPath?: string;
  /** Write stderr to this file as it arrives. */
  stderrPath?: string;
  /** Keep stdout/stderr in memory and return them (small outputs only). */
  capture?: boolean;
  /** Aborting stops the child (SIGTERM, then SIGKILL) and resolves as interrupted. */
  signal?: AbortSignal;
  /** Extra environment variables. */
  env?: Record<string, string>;
}

/** How a process ended. */
export interface ProcessResult {
  /** Exit code, or null when a signal ended it. */
  code: number | null;
  /** The signal that ended it, if any. */
  signal: string | null;
  timedOut: boolean;
  /** Stopped through `signal` (Ctrl-C, SIGTERM to kvlab). */
  interrupted: boolean;
  durationMs: number;
  /** The process id (for the record; it is gone now). */
  pid: number;
  stdout?: Uint8Array;
  stderr?: Uint8Array;
}

/** Starts processes. */
export interface ProcessRunner {
  run(options: RunProcessOptions): Promise<ProcessResult>;
  /**
   * The command line that running `argv` starts, as a run stores it (a pinned runner adds
   * `taskset -c LIST`). Without it, `argv` itself.
   */
  shown?(argv: readonly string[]): string[];
}

/** Options of {@link DenoProcessRunner}. */
export interface DenoProcessRunnerOptions {
  /**
   * A folder for one pid file per running child (`<pid>.json`), removed when the child ends;
   * `runPlan` uses `DIR/locks/children`. None by default.
   */
  pidDir?: string;
}

/**
 * A runner that starts every program of `inner` pinned to a CPU list: `taskset -c LIST argv…`
 * (util-linux), as Redis's own benchmark CI pins its client. The argv the inner runner gets is
 * the pinned one; what the child starts inherits the pinning. A program that is not there
 * throws {@link ToolNotFoundError} as an unpinned run does (taskset would start and fail).
 *
 * @param inner The runner that starts the process.
 * @param cpus A CPU list as `taskset -c` takes it (`0`, `2-3`, `0,2`).
 * @returns A runner that prefixes each argv with `taskset -c cpus`.
 *
 * @example
 * ```ts
 * import { pinnedRunner, type ProcessRunner, type RunProcessOptions } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const seen: string[][] = [];
 * const fake: ProcessRunner = {
 *   run: (o: RunProcessOptions) => {
 *     seen.push([...o.argv]);
 *     return Promise.resolve({ code: 0, signal: null, timedOut: false, interrupted: false, durationMs: 1, pid: 1 });
 *   },
 * };
 * await pinnedRunner(fake, "0").run({ argv: ["sh", "-c", "exit 0"], timeoutMs: 1000 });
 * assert.deepEqual(seen, [["taskset", "-c", "0", "sh", "-c", "exit 0"]]);
 * assert.deepEqual(pinnedRunner(fake, "0").shown?.(["redis-benchmark"]), ["taskset", "-c", "0", "redis-benchmark"]);
 * await assert.rejects(
 *   () => pinnedRunner(fake, "0").run({ argv: ["no-such-benchmark"], timeoutMs: 1000 }),
 *   { name: "ToolNotFoundError" },
 * );
 * ```
 */
export function pinnedRunner(inner: ProcessRunner, cpus: string): ProcessRunner {
  return {
    run: (o) => {
      const program = o.argv[0];
      if (program !== undefined && !isProgram(program)) {
        return Promise.reject(new ToolNotFoundError(program));
      }
      return inner.run({ ...o, argv: pinnedArgv(cpus, o.argv) });
    },
    shown: (argv) => pinnedArgv(cpus, inner.shown?.(argv) ?? argv),
  };
}

/** Whether `program` (a path, or a name looked up on PATH) is an executable file. */
function isProgram(program: string): boolean {
  const dirs = (Deno.env.get("PATH") ?? "").split(":").filter((d) => d !== "");
  const paths = program.includes("/") ? [program] : dirs.map((d) => `${d}/${program}`);
  return paths.some(isExecutableFile);
}

/**
 * An argv run under `taskset -c cpus` (the command line a pinned run shows and records).
 *
 * @param cpus A CPU list (`0`, `2-3`).
 * @param argv The program and its arguments.
 * @returns `["taskset", "-c", cpus, ...argv]`.
 */
export function pinnedArgv(cpus: string, argv: readonly string[]): string[] {
  return ["taskset", "-c", cpus, ...argv];
}

/** Runs real processes with `Deno.Command`, each in its own process group. */
export class DenoProcessRunner implements ProcessRunner {
  readonly #pidDir?: string;

  /** @param options Where pid files go, if anywhere. */
  constructor(options: DenoProcessRunnerOptions = {}) {
    this.#pidDir = options.pidDir;
  }

  async run(options: RunProcessOptions): Promise<ProcessResult> {
    const [program, ...args] = options.argv;
    if (program === undefined) throw new TypeError("argv must not be empty");
    const started = performance.now();
    const child = spawn(program, args, options.env);
    const pidFile = this.#writePidFile(child, program);
    const ends = endings(child, options);
    try {
      if (pidFile instanceof Error) throw pidFile;
      const { stdout, stderr, status } = await collect(child, options, ends.stop);
      return {
        code: status.signal ? null : status.code,
        signal: status.signal,
        timedOut: ends.timedOut(),
        interrupted: ends.interrupted(),
        durationMs: performance.now() - started,
        pid: child.pid,
        stdout,
        stderr,
      };
    } catch (e) {
      // never leave the tool running behind an error (a full disk, a failed pid file)
      ends.stop(true);
      await child.status;
      throw e;
    } finally {
      ends.clear();
      LIVE.delete(child.pid);
      if (typeof pidFile === "string") {
        try {
          Deno.removeSync(pidFile);
        } catch { /* already gone */ }
      }
    }
  }

  /** Writes the child's pid file; returns its path, or the error to throw. */
  #writePidFile(child: Deno.ChildProcess, program: string): string | Error | undefined {
    if (!this.#pidDir) return undefined;
    const path = `${this.#pidDir}/${child.pid}.json`;
    const record: ChildPidFile = {
      pid: child.pid,
      start: processStart(child.pid),
      program: program.split("/").pop() ?? program,
      kvlab_pid: Deno.pid,
      kvlab_start: kvlabStart(),
      hostname: hostName(),
      started_at: new Date().toISOString(),
    };
    try {
      Deno.mkdirSync(this.#pidDir, { recursive: true });
      Deno.writeTextFileSync(path, JSON.stringify(record) + "\n");
      return path;
    } catch (e) {
      return diskFullAt(e, path) as Error;
    }
  }
}

/** The groups of the children running now, stopped when kvlab exits. */
const LIVE = new Set<number>();
let exitHooked = false;

let ownStart: string | null | undefined;
/** kvlab's own start time, asked once. */
function kvlabStart(): string | null {
  if (ownStart === undefined) ownStart = processStart(Deno.pid);
  return ownStart;
}

/**
 * Starts a child in its own process group, through `setpriv --pdeathsig KILL` when there is
 * one. The program is looked up on PATH first, so a missing tool is a {@link ToolNotFoundError}
 * whether or not it is wrapped.
 */
function spawn(
  program: string,
  args: readonly string[],
  env: Record<string, string> | undefined,
): Deno.ChildProcess {
  const path = env?.PATH ?? Deno.env.get("PATH") ?? "";
  const exe = findExecutable(program, path);
  if (exe === undefined) throw new ToolNotFoundError(program);
  const guard = deathGuard();
  const [cmd, ...rest] = guard ? [...guard, exe, ...args] : [exe, ...args];
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd, {
      args: rest,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env,
      detached: true,
    }).spawn();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied) {
      throw new ToolNotFoundError(program);
    }
    throw e;
  }
  LIVE.add(child.pid);
  if (!exitHooked) {
    exitHooked = true;
    globalThis.addEventListener("unload", () => {
      for (const pid of LIVE) killGroup(pid, "SIGKILL");
    });
  }
  return child;
}

/** The executable a program name runs: itself when it has a slash, else the first on PATH. */
function findExecutable(program: string, path: string): string | undefined {
  const isExe = (p: string) => {
    try {
      const st = Deno.statSync(p);
      return st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false;
    }
  };
  if (program.includes("/")) return isExe(program) ? program : undefined;
  for (const dir of path.split(":")) {
    const p = `${dir || "."}/${program}`;
    if (isExe(p)) return p;
  }
  return undefined;
}

let guardArgv: string[] | null | undefined;
/** `setpriv --pdeathsig KILL --` when util-linux's setpriv is there and takes it, else null. */
function deathGuard(): string[] | null {
  if (guardArgv !== undefined) return guardArgv;
  guardArgv = null;
  const setpriv = findExecutable("setpriv", Deno.env.get("PATH") ?? "");
  if (setpriv) {
    try {
      const probe = new Deno.Command(setpriv, {
        args: ["--pdeathsig", "KILL", "--", "true"],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).outputSync();
      if (probe.success) guardArgv = [setpriv, "--pdeathsig", "KILL", "--"];
    } catch { /* not usable: pid files and the exit hook remain */ }
  }
  return guardArgv;
}

/** The timeout and the stop signal of a child, and how it was ended. */
function endings(child: Deno.ChildProcess, options: RunProcessOptions) {
  let timedOut = false;
  let interrupted = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const stop = (now = false) => {
    if (now) {
      killGroup(child.pid, "SIGKILL");
      return;
    }
    killGroup(child.pid, "SIGTERM");
    killTimer ??= setTimeout(() => killGroup(child.pid, "SIGKILL"), 2000);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, options.timeoutMs);
  const onAbort = () => {
    interrupted = true;
    stop();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  return {
    stop,
    timedOut: () => timedOut,
    interrupted: () => interrupted,
    clear: () => {
      clearTimeout(timer);
      if (killTimer !== undefined) clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * Streams stdout and stderr to their files and callbacks until the child ends. The first
 * error (a full disk names its file) stops the child at once, and is thrown once it is gone.
 */
async function collect(
  child: Deno.ChildProcess,
  options: RunProcessOptions,
  stop: (now?: boolean) => void,
): Promise<{ stdout?: Uint8Array; stderr?: Uint8Array; status: Deno.CommandStatus }> {
  let failure: unknown;
  const fail = (e: unknown) => {
    failure ??= e;
    stop(true);
    return undefined;
  };
  const pumps = [
    pump(child.stdout, { path: options.stdoutPath, cb: options.onStdout, capture: options.capture })
      .catch(fail),
    pump(child.stderr, { path: options.stderrPath, cb: options.onStderr, capture: options.capture })
      .catch(fail),
  ];
  const status = await child.status;
  const [stdout, stderr] = await Promise.all(pumps);
  if (failure !== undefined) throw failure;
  return { stdout, stderr, status };
}

/** Copies a stream to a file (created, must not exist) and a callback, keeping it if asked. */
async function pump(
  stream: ReadableStream<Uint8Array>,
  { path, cb, capture }: {
    path: string | undefined;
    cb: ((c: Uint8Array) => void) | undefined;
    capture: boolean | undefined;
  },
): Promise<Uint8Array | undefined> {
  let file: Deno.FsFile | undefined;
  const kept: Uint8Array[] = [];
  try {
    if (path) file = await Deno.open(path, { write: true, createNew: true });
    for await (const chunk of stream) {
      if (file) {
        let off = 0;
        while (off < chunk.length) off += await file.write(chunk.subarray(off));
      }
      if (capture) kept.push(chunk);
      cb?.(chunk);
    }
  } catch (e) {
    await stream.cancel().catch(() => {});
    throw path ? diskFullAt(e, path) : e;
  } finally {
    file?.close();
  }
  if (!capture) return undefined;
  const out = new Uint8Array(kept.reduce((n, c) => n + c.length, 0));
  let off = 0;
  for (const c of kept) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

/** Whether `path` is a file with an execute bit (or a file system without modes). */
export function isExecutableFile(path: string): boolean {
  try {
    const st = Deno.statSync(path);
    return st.isFile && (st.mode === null || (st.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}
