/**
 * Running tools as processes: an argv array (never a shell string), stdout and stderr streamed
 * to callbacks and to files as they arrive, a timeout, and a stop signal (Ctrl-C / SIGTERM)
 * that ends the child and keeps what it printed. The {@link ProcessRunner} interface is what
 * collectors take, so tests can hand them a fake.
 *
 * @module
 */

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
}

/** Runs real processes with `Deno.Command`. */
export class DenoProcessRunner implements ProcessRunner {
  async run(options: RunProcessOptions): Promise<ProcessResult> {
    const [program, ...args] = options.argv;
    if (program === undefined) throw new TypeError("argv must not be empty");
    const started = performance.now();
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(program, {
        args,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        env: options.env,
      }).spawn();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied) {
        throw new ToolNotFoundError(program);
      }
      throw e;
    }
    let timedOut = false;
    let interrupted = false;
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    const stop = () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      killTimer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
      }, 2000);
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

    const pump = async (
      stream: ReadableStream<Uint8Array>,
      path: string | undefined,
      cb: ((c: Uint8Array) => void) | undefined,
    ): Promise<Uint8Array | undefined> => {
      const file = path ? await Deno.open(path, { write: true, createNew: true }) : undefined;
      const kept: Uint8Array[] = [];
      try {
        for await (const chunk of stream) {
          if (file) {
            let off = 0;
            while (off < chunk.length) off += await file.write(chunk.subarray(off));
          }
          if (options.capture) kept.push(chunk);
          cb?.(chunk);
        }
      } finally {
        file?.close();
      }
      if (!options.capture) return undefined;
      const out = new Uint8Array(kept.reduce((n, c) => n + c.length, 0));
      let off = 0;
      for (const c of kept) {
        out.set(c, off);
        off += c.length;
      }
      return out;
    };
    try {
      const [stdout, stderr, status] = await Promise.all([
        pump(child.stdout, options.stdoutPath, options.onStdout),
        pump(child.stderr, options.stderrPath, options.onStderr),
        child.status,
      ]);
      return {
        code: status.signal ? null : status.code,
        signal: status.signal,
        timedOut,
        interrupted,
        durationMs: performance.now() - started,
        pid: child.pid,
        stdout,
        stderr,
      };
    } finally {
      clearTimeout(timer);
      if (killTimer !== undefined) clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }
}
