/**
 * The main thread's side of the pub/sub epoll engine: a Worker runs the step's blocking loop
 * (`_ffi_worker.ts`), so this thread stays free for Ctrl-C/SIGTERM and the deadline, which
 * reach the loop through a shared stop flag (1: end now, keeping the counts; 2: end for the
 * deadline). Errors come back by name and become the same errors the Deno-TCP engine throws.
 *
 * @module
 */

import process from "node:process";
import { decodeHistogram, latencySummary } from "../loadgen/histogram.ts";
import type { FfiToWorker, FromWorker } from "./_ffi_worker.ts";
import { type PubSubChecked, type PubSubResult, PubSubUnsupportedError } from "./types.ts";

/** The standard errors a Worker's error may be, besides `Deno.errors`. */
const STANDARD: Record<string, new (m: string) => Error> = { TypeError, RangeError, SyntaxError };

/** The error a Worker's `{ name, message }` stands for. */
function rebuilt(name: string, message: string): Error {
  if (name === "PubSubUnsupportedError") return new PubSubUnsupportedError(message);
  const known = Deno.errors as unknown as Record<string, new (m: string) => Error>;
  if (Object.hasOwn(known, name)) return new known[name](message);
  if (Object.hasOwn(STANDARD, name)) return new STANDARD[name](message);
  return new Error(`pub/sub worker: ${name}: ${message}`);
}

/**
 * Runs a checked step on the epoll engine in a Worker.
 *
 * @param o The checked step (its `signal` stays on this thread).
 * @param engineNote The note the result carries.
 * @returns The step's result.
 * @throws {PubSubUnsupportedError} When the server refuses SSUBSCRIBE (sharded mode).
 * @throws {Deno.errors.TimedOut} When subscribing or the whole call passes its deadline.
 */
export async function runFfiPubSub(
  o: PubSubChecked,
  engineNote: string | null,
): Promise<PubSubResult> {
  const wall0 = performance.now();
  const cpu0 = process.cpuUsage();
  const stop = new SharedArrayBuffer(4);
  const flag = new Int32Array(stop);
  const worker = new Worker(new URL("./_ffi_worker.ts", import.meta.url), { type: "module" });
  let answer: (m: FromWorker) => void = () => {};
  worker.onmessage = (e: MessageEvent<FromWorker>) => answer(e.data);
  worker.onerror = (e) => {
    e.preventDefault();
    answer({ type: "error", name: "Error", message: e.message });
  };
  const ask = <T extends FromWorker["type"]>(msg: FfiToWorker, want: T) =>
    new Promise<Extract<FromWorker, { type: T }>>((resolve, reject) => {
      answer = (m) => {
        if (m.type === want) resolve(m as Extract<FromWorker, { type: T }>);
        else if (m.type === "error") reject(rebuilt(m.name, m.message));
        else reject(new Error(`pub/sub worker: unexpected ${m.type}`));
      };
      worker.postMessage(msg);
    });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      Atomics.store(flag, 0, 2); // the loop sees it within its longest sleep and closes
      reject(new Deno.errors.TimedOut(`pub/sub step exceeded its ${o.timeoutS} s deadline`));
    }, o.timeoutS * 1000);
  });
  const abort = () => Atomics.store(flag, 0, 1);
  if (o.signal?.aborted) abort();
  o.signal?.addEventListener("abort", abort, { once: true });
  let ran = false;
  try {
    const { signal: _, ...options } = o;
    await Promise.race([ask({ type: "connect", options, stop }, "ready"), deadline]);
    const cpu1 = process.cpuUsage();
    const startAtEpochMs = performance.timeOrigin + performance.now() + 20;
    const done = await Promise.race([ask({ type: "run", startAtEpochMs }, "done"), deadline]);
    ran = true;
    const cpu = process.cpuUsage(cpu1);
    const r = done.result;
    const latency = decodeHistogram(r.latency);
    const sendLateness = decodeHistogram(r.sendLateness);
    return {
      ...r,
      latency,
      sendLateness,
      summary: latencySummary(latency),
      lateness: latencySummary(sendLateness),
      clientCpuS: (cpu.user + cpu.system) / 1e6,
      setupCpuS: (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / 1e6,
      wallS: (performance.now() - wall0) / 1000,
      engine: "ffi",
      engineNote,
    };
  } finally {
    o.signal?.removeEventListener("abort", abort);
    clearTimeout(timer);
    if (!ran) {
      // a failed or timed-out step: the loop closes its sockets (on the flag, or on `close`)
      Atomics.store(flag, 0, 2);
      // (a `ready` still on its way, from a connect the deadline overtook, is not the answer:
      // the Worker closes after it, and terminating it first would leave its sockets open)
      let wait: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        new Promise<void>((resolve) => {
          answer = (m) => {
            if (m.type === "closed" || m.type === "error") resolve();
          };
          worker.postMessage({ type: "close" } satisfies FfiToWorker);
        }),
        new Promise((r) => (wait = setTimeout(r, 2000))),
      ]);
      clearTimeout(wait);
    }
    worker.terminate();
  }
}
