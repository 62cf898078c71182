/**
 * The options and result of a pub/sub step ({@link runPubSub} in `engine.ts`).
 *
 * @module
 */

import type { Histogram, LatencySummary } from "../loadgen/histogram.ts";
import type { ArrivalMode } from "../loadgen/schedule.ts";
import type { SecondBucket } from "../loadgen/series.ts";
import type { Endpoint } from "../loadgen/wire.ts";
import type { LoadgenEngine } from "../loadgen/open_loop.ts";
import type { PubSubMode } from "./payload.ts";
import type { SlotMap } from "../cluster/slots.ts";

/** The engines that can run a step (the open loop's two): `ffi` (one blocking epoll loop over
 * libc by Deno FFI, on a Worker) and `deno` (Deno's TCP on the calling thread). */
export type PubSubEngineName = Exclude<LoadgenEngine, "auto">;
/** Which engine to use: `auto` = `ffi` where it can run, else `deno`. */
export type PubSubEngine = LoadgenEngine;

/** The server has no sharded pub/sub (`SSUBSCRIBE` is an unknown command): a recorded skip. */
export class PubSubUnsupportedError extends Error {
  /** @param message The server's reply. */
  constructor(message: string) {
    super(message);
    this.name = "PubSubUnsupportedError";
  }
}

/** Options of `runPubSub`. */
export interface PubSubOptions extends Endpoint {
  mode: PubSubMode;
  /** Publisher connections. */
  publishers: number;
  /** Subscriber connections. */
  subscribers: number;
  /** Channels. @default {one-to-one: subscribers; fan-out: 1; sharded: subscribers / fanOut} */
  channels?: number;
  /** Subscribers of each channel. @default {one-to-one: 1; fan-out: subscribers; sharded: 1} */
  fanOut?: number;
  /** Payload size, at least 16 (the header). @default {128} */
  payloadBytes?: number;
  /**
   * Target delivery rate (messages × subscribers reached, per second): the step's requested
   * rate, named as everywhere in kvlab (`requested_ops_per_sec` in the dataset).
   */
  requestedOpsPerSec: number;
  /** Length of the publishing window, seconds. */
  durationS: number;
  /** How long deliveries may still arrive after the window, seconds. @default {2} */
  graceS?: number;
  /** Hard deadline of the call, seconds. @default {durationS + graceS + 30} */
  timeoutS?: number;
  /** @default {"uniform"} */
  arrival?: ArrivalMode;
  /** Channel names are this plus the index. @default {"kvlab:ps:"} */
  channelPrefix?: string;
  /** Most messages published; a safety bound. @default {2 × publish rate × duration + publishers} */
  maxMessages?: number;
  /**
   * Pacing quantum, ms: the publishers wake at most once per quantum and send everything due
   * (one write per publisher with something due), so a message may leave up to a quantum (plus
   * the timer's own lateness) after its intended time: that shows in `lateness`, and in the
   * latency, which counts from the intended time. 0: wake for every due message (the most
   * precise pacing, and the most CPU).
   * @default {the time of 100 messages at the publish rate, within [0.25, 1] ms (defaultQuantumMs)}
   */
  quantumMs?: number;
  /** @default {5000} */
  connectTimeoutMs?: number;
  /**
   * Which engine runs the step. `ffi`: every publisher and subscriber in one blocking epoll
   * loop over libc by Deno FFI on a Worker (Linux ≥ 5.11, `--allow-ffi`, an IPv4 host; the
   * calling thread stays free for signals); `deno`: Deno's TCP on the calling thread.
   * `auto`: `ffi` where it can run, else `deno` (the result's `engineNote` says why).
   * @default {"auto"}
   */
  engine?: PubSubEngine;
  /**
   * Engine `ffi`: time deliveries by the kernel's receive timestamp (SO_TIMESTAMPNS), so the
   * loop need not wake for each push: it reads them at its next publishing turn. Where the
   * kernel gives none (or with false), a delivery is timed when it is read and pushes wake
   * the loop.
   * @default {true}
   */
  kernelTimestamps?: boolean;
  /**
   * Key of the seal that binds each message's sequence number to its stamp (`sequenceSeal` of
   * `payload.ts`): a message whose stamp kvlab did not write fails it and is a protocol
   * error, never a delivery.
   * @default {a random 32-bit number}
   */
  sealKey?: number;
  /** Seed of Poisson arrivals. @default {1} */
  seed?: number;
  /** Aborting ends the step at once; the result says `interrupted`. */
  signal?: AbortSignal;
  /**
   * A Redis Cluster's slot map (engine `deno`). Sharded mode: each channel's subscribers
   * connect to (and SSUBSCRIBE at) the master of its slot (CRC16, hash tags), and each
   * publisher SPUBLISHes it there (one connection per master). Other modes: PUBLISH is
   * broadcast over the cluster bus, so subscriber `i` and publisher `i` connect to master
   * `i mod masters`. The result gets `shards`.
   */
  cluster?: SlotMap;
  /** Fault injection for tests: subscribers wait this long after each read before stamping it
   * (engine `ffi`: a ready subscriber is read this long after it became readable, and timed
   * then, not by the kernel's stamp). */
  readDelayMs?: number;
  /** Fault injection for tests: the first N subscribers stop reading after `stallAfterMs`. */
  stallSubscribers?: number;
  /** @default {0} */
  stallAfterMs?: number;
}

/** One master of a cluster over a step (`PubSubResult.shards`). */
export interface PubSubShard {
  /** `host:port`. */
  node: string;
  /** The step's channels whose slot this master serves. */
  channels: number;
  /** Subscriber connections to it. */
  subscriberConnections: number;
  /** Messages kvlab published through it (SPUBLISH, or PUBLISH in the other modes). */
  published: number;
  /**
   * Its INFO commandstats calls of that command over the step (null: not read, or it did not
   * answer); set by the step, which warns when they differ from `published`.
   */
  serverCalls?: number | null;
}

/** What `runPubSub` measured. Latencies in histograms are integer nanoseconds. */
export interface PubSubResult {
  mode: PubSubMode;
  publishers: number;
  subscribers: number;
  channels: number;
  fanOut: number;
  payloadBytes: number;
  /** Target delivery rate, per second. */
  requestedOpsPerSec: number;
  /** Target delivery rate ÷ fan-out. */
  publishRatePerSec: number;
  durationS: number;
  graceS: number;
  /** Messages written. */
  published: number;
  /** Messages due in the window but never written (budget spent, publisher closed). */
  unsent: number;
  /** Error replies to PUBLISH, and publishes lost to a disconnect. */
  publishErrors: number;
  /** Distinct deliveries received within the window and the grace. */
  delivered: number;
  /** Distinct deliveries received within the window. */
  deliveredInWindow: number;
  /** Expected deliveries ((published − publishErrors) × fan-out) never received. */
  lost: number;
  /** Deliveries received again (a sequence number not above the last one seen). */
  duplicated: number;
  /** Connections lost (publishers or subscribers). */
  disconnects: number;
  /** Messages pushed to a subscriber that kvlab did not publish (never deliveries). */
  protocolErrors: number;
  /** Publish errors, disconnects, protocol errors and error replies to subscribers. */
  errors: number;
  errorSamples: string[];
  /** Achieved delivery rate: distinct deliveries received within the window ÷ its length. */
  achievedOpsPerSec: number;
  /** Delivery latency from the intended publish time, ns. */
  latency: Histogram;
  /** Actual write − intended publish time, ns: the publishers' own lateness. */
  sendLateness: Histogram;
  summary: LatencySummary;
  lateness: LatencySummary;
  /** Per second: `sent` = messages published, `completed` = deliveries, `errors`. */
  perSecond: SecondBucket[];
  /** CPU time of this process from the start of the schedule to the end of the grace, s. */
  clientCpuS: number;
  /** CPU time spent connecting and subscribing, s. */
  setupCpuS: number;
  wallS: number;
  /** The step was cut short by the signal. */
  interrupted: boolean;
  /** The engine that ran. */
  engine: PubSubEngineName;
  /** Why `auto` did not choose `ffi` (or `"asked for"` for `deno`); null when `ffi` ran. */
  engineNote: string | null;
  /** Deliveries timed by the kernel's receive timestamp (engine `ffi`; the rest were timed
   * when read). */
  stampedDeliveries: number;
  /** Against a cluster: each master's channels, connections and messages. */
  shards?: PubSubShard[];
}

/** The checked options with defaults filled. */
export type PubSubChecked =
  & Required<
    Omit<
      PubSubOptions,
      "password" | "hostname" | "channels" | "fanOut" | "signal" | "engine" | "tls" | "cluster"
    >
  >
  & Endpoint
  & {
    channels: number;
    fanOut: number;
    signal?: AbortSignal;
    engine?: PubSubEngine;
    cluster?: SlotMap;
  };
