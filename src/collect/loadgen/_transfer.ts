/**
 * Shards in Workers: starting them at one shared instant, stopping them, their outcomes
 * merged exactly.
 *
 * @module
 */

import { type Histogram, mergeHistograms } from "./histogram.ts";
import type { IntervalCounts, SecondCounts } from "./series.ts";
import {
  type CommandOutcome,
  decodeOutcome,
  type EncodedOutcome,
  type EngineName,
  type ShardOptions,
  type ShardOutcome,
  type ToWorker,
} from "./_outcome.ts";

/** Adds the counts and histograms of several outcomes (series stay per part). */
export function mergeOutcomes(parts: readonly ShardOutcome[]): Omit<ShardOutcome, "series"> & {
  seriesParts: SecondCounts[];
  intervalParts: IntervalCounts[];
} {
  type Count =
    | "sent"
    | "completed"
    | "errors"
    | "disconnects"
    | "unsent"
    | "unanswered"
    | "windowCompleted"
    | "stampedReplies"
    | "moved"
    | "asked";
  const sum = (k: Count) => parts.reduce((n, p) => n + p[k], 0);
  return {
    sent: sum("sent"),
    completed: sum("completed"),
    errors: sum("errors"),
    disconnects: sum("disconnects"),
    unsent: sum("unsent"),
    unanswered: sum("unanswered"),
    windowCompleted: sum("windowCompleted"),
    stampedReplies: sum("stampedReplies"),
    moved: sum("moved"),
    asked: sum("asked"),
    runQueueS: parts.some((p) => p.runQueueS !== null)
      ? parts.reduce((n, p) => n + (p.runQueueS ?? 0), 0)
      : null,
    errorSamples: [...new Set(parts.flatMap((p) => p.errorSamples))].slice(0, 5),
    fromIntended: mergeHistograms(parts.map((p) => p.fromIntended)),
    fromSend: mergeHistograms(parts.map((p) => p.fromSend)),
    lateness: mergeHistograms(parts.map((p) => p.lateness)),
    queue: mergeHistograms(parts.map((p) => p.queue)),
    delay: mergeHistograms(parts.map((p) => p.delay)),
    seriesParts: parts.map((p) => p.series),
    intervalParts: parts.flatMap((p) => (p.intervals ? [p.intervals] : [])),
    sets: {
      sent: parts.reduce((n, p) => n + p.sets.sent, 0),
      completed: parts.reduce((n, p) => n + p.sets.completed, 0),
      errors: parts.reduce((n, p) => n + p.sets.errors, 0),
      fromIntended: mergeHistograms(parts.map((p) => p.sets.fromIntended)),
      fromSend: mergeHistograms(parts.map((p) => p.sets.fromSend)),
    },
  };
}

/** How the caller follows and steers {@link runInWorkers}. */
export interface WorkerHooks {
  /** Receives `stop` (end everything now: a deadline) and `interrupt` (end the window). */
  register(stop: () => Promise<void>, interrupt: () => void): void;
  /** All shards are connected; returns the shared start instant (epoch ms). */
  started(): number;
}

/** Runs shards in Workers: connect all, then start all at one shared wall-clock instant. */
export async function runInWorkers(
  shards: ShardOptions[],
  engine: EngineName,
  hooks: WorkerHooks,
): Promise<ShardOutcome[]> {
  const stop = new SharedArrayBuffer(4);
  const flag = new Int32Array(stop);
  const workers = shards.map(() =>
    new Worker(new URL("./_worker.ts", import.meta.url), { type: "module" })
  );
  let settled = (): void => {};
  const over = new Promise<void>((r) => (settled = r));
  const terminate = () => workers.forEach((w) => w.terminate());
  hooks.register(async () => {
    // the epoll loops see the flag within their longest sleep and close their sockets
    Atomics.store(flag, 0, 2);
    if (engine === "ffi") await within(over, 2000);
    terminate();
  }, () => {
    Atomics.store(flag, 0, 1);
    workers.forEach((w) => w.postMessage({ type: "interrupt" } satisfies ToWorker));
  });
  const ask = (w: Worker, msg: ToWorker, want: string) =>
    new Promise<{ outcome?: EncodedOutcome }>((resolve, reject) => {
      w.onmessage = (e) => {
        if (e.data.type === want) resolve(e.data);
        else reject(new Error(`open-loop worker: ${e.data.message ?? e.data.type}`));
      };
      w.onerror = (e) => {
        e.preventDefault();
        reject(new Error(`open-loop worker: ${e.message}`));
      };
      w.postMessage(msg);
    });
  let ran = false;
  try {
    await Promise.all(
      workers.map((w, k) => ask(w, { type: "connect", options: shards[k], engine, stop }, "ready")),
    );
    ran = true;
    const startAtEpochMs = hooks.started();
    const done = await Promise.all(
      workers.map((w) => ask(w, { type: "run", startAtEpochMs }, "done")),
    );
    return done.map((d) => decodeOutcome(d.outcome!));
  } finally {
    if (!ran) {
      // a shard failed to connect: the others close their sockets before they go
      const closing = workers.map((w) => ask(w, { type: "close" }, "closed").catch(() => {}));
      await within(Promise.all(closing).then(() => {}), 1000);
    }
    terminate();
    settled();
  }
}

/** Waits for `p`, at most `ms`. */
async function within(p: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** The SET and GET shares of a merged outcome: GETs are the whole minus the SETs. */
export function commandOutcomes(m: ReturnType<typeof mergeOutcomes>): CommandOutcome[] {
  const minus = (whole: Histogram, part: Histogram) => {
    const h = mergeHistograms([whole]);
    h.subtract(part);
    return h;
  };
  const s = m.sets;
  const out: CommandOutcome[] = [];
  if (s.sent > 0) {
    out.push({
      test: "SET",
      ...s,
      latencyFromIntended: s.fromIntended,
      latencyFromSend: s.fromSend,
    });
  }
  if (m.sent > s.sent) {
    out.push({
      test: "GET",
      sent: m.sent - s.sent,
      completed: m.completed - s.completed,
      errors: m.errors - s.errors,
      latencyFromIntended: minus(m.fromIntended, s.fromIntended),
      latencyFromSend: minus(m.fromSend, s.fromSend),
    });
  }
  return out;
}
