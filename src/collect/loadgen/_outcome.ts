/**
 * What one shard of the open-loop engine measured (`_shard.ts`), as plain data: counts, the
 * SET share, and the histograms of latency and of the generator's own send delay.
 *
 * @module
 */

import type { Histogram } from "./histogram.ts";
import type { SecondCounts } from "./series.ts";

/** Request counts of an open-loop run (of one shard, or of all merged). */
export interface OpenLoopCounts {
  /** Requests written. */
  sent: number;
  /** Successful (non-error) replies. */
  completed: number;
  /** Error replies plus requests lost to disconnects. */
  errors: number;
  /** Connections lost during the run (they are not reopened). */
  disconnects: number;
  /** Requests due in the window that were never sent (the connection stayed busy or closed). */
  unsent: number;
  /** Requests still without a reply when the drain time ran out. */
  unanswered: number;
  /** Up to five distinct error texts. */
  errorSamples: string[];
}

/** The SET part of an outcome (the GET part is the whole minus it). */
export interface SetCounts {
  sent: number;
  completed: number;
  errors: number;
  fromIntended: Histogram;
  fromSend: Histogram;
}

/** What one shard measured. */
export interface ShardOutcome extends OpenLoopCounts {
  fromIntended: Histogram;
  fromSend: Histogram;
  /** Timer part of the send delay: actual send − max(intended, connection free). */
  lateness: Histogram;
  /** Queue part: max(0, connection free − intended), the wait behind a busy connection. */
  queue: Histogram;
  /** The whole intended → actual send delay (queue + lateness). */
  delay: Histogram;
  series: SecondCounts;
  /** The SETs among the requests counted above. */
  sets: SetCounts;
  /** Successful replies received inside the measured window, whatever their intended time
   * (the achieved rate; an overloaded schedule falls behind, so its late requests still count). */
  windowCompleted: number;
  /** Seconds the shard's thread waited for a CPU (runnable, not running) from the start of its
   * schedule to its end; null where Linux's schedstat is not readable. */
  runQueueS: number | null;
}
