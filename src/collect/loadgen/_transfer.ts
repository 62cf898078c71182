/**
 * Shard outcomes across Workers (histograms as compressed base64) and their exact merge.
 *
 * @module
 */

import { decodeHistogram, encodeHistogram, mergeHistograms } from "./histogram.ts";
import type { SecondCounts } from "./series.ts";
import type { SetCounts, ShardOutcome } from "./_shard.ts";

/** A {@link ShardOutcome} as plain structured-clone data. */
export interface EncodedOutcome extends
  Omit<
    ShardOutcome,
    "fromIntended" | "fromSend" | "lateness" | "queue" | "delay" | "series" | "sets"
  > {
  fromIntended: string;
  fromSend: string;
  lateness: string;
  queue: string;
  delay: string;
  series: Omit<SecondCounts, "latency"> & { latency: string[] };
  sets: Omit<SetCounts, "fromIntended" | "fromSend"> & { fromIntended: string; fromSend: string };
}

/** Encodes an outcome for `postMessage`. */
export function encodeOutcome(o: ShardOutcome): EncodedOutcome {
  return {
    ...o,
    fromIntended: encodeHistogram(o.fromIntended),
    fromSend: encodeHistogram(o.fromSend),
    lateness: encodeHistogram(o.lateness),
    queue: encodeHistogram(o.queue),
    delay: encodeHistogram(o.delay),
    series: { ...o.series, latency: o.series.latency.map(encodeHistogram) },
    sets: {
      ...o.sets,
      fromIntended: encodeHistogram(o.sets.fromIntended),
      fromSend: encodeHistogram(o.sets.fromSend),
    },
  };
}

/** Reverses {@link encodeOutcome}. */
export function decodeOutcome(e: EncodedOutcome): ShardOutcome {
  return {
    ...e,
    fromIntended: decodeHistogram(e.fromIntended),
    fromSend: decodeHistogram(e.fromSend),
    lateness: decodeHistogram(e.lateness),
    queue: decodeHistogram(e.queue),
    delay: decodeHistogram(e.delay),
    series: { ...e.series, latency: e.series.latency.map(decodeHistogram) },
    sets: {
      ...e.sets,
      fromIntended: decodeHistogram(e.sets.fromIntended),
      fromSend: decodeHistogram(e.sets.fromSend),
    },
  };
}

/** Adds the counts and histograms of several outcomes (series stay per part). */
export function mergeOutcomes(parts: readonly ShardOutcome[]): Omit<ShardOutcome, "series"> & {
  seriesParts: SecondCounts[];
} {
  type Count =
    | "sent"
    | "completed"
    | "errors"
    | "disconnects"
    | "unsent"
    | "unanswered"
    | "windowCompleted";
  const sum = (k: Count) => parts.reduce((n, p) => n + p[k], 0);
  return {
    sent: sum("sent"),
    completed: sum("completed"),
    errors: sum("errors"),
    disconnects: sum("disconnects"),
    unsent: sum("unsent"),
    unanswered: sum("unanswered"),
    windowCompleted: sum("windowCompleted"),
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
    sets: {
      sent: parts.reduce((n, p) => n + p.sets.sent, 0),
      completed: parts.reduce((n, p) => n + p.sets.completed, 0),
      errors: parts.reduce((n, p) => n + p.sets.errors, 0),
      fromIntended: mergeHistograms(parts.map((p) => p.sets.fromIntended)),
      fromSend: mergeHistograms(parts.map((p) => p.sets.fromSend)),
    },
  };
}
