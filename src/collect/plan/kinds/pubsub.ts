/**
 * Plan kind `pubsub`: pub/sub delivery latency at fixed target delivery rates (steps), in one or
 * more modes (`one-to-one`, `fan-out`, `sharded`), each step one stored run made by kvlab's own
 * engine. Cells run repetition by repetition, each mode's rates in increasing order, servers
 * alternating. The sustained rule of `fixed_rate.ts` decides each step; once a server fails to
 * sustain a step (`NS`), its higher steps of that mode and repetition are not run and nothing
 * is stored for them (a resumed plan reads the verdicts of the runs already stored).
 *
 * @module
 */

import { SkipAfterNs } from "../../../fixed_rate.ts";
import { limitProblem, LIMITS } from "../../limits.ts";
import pl from "nodejs-polars";
import { Dataset } from "../../../store/dataset.ts";
import type { CollectedRun } from "../../collector.ts";
import { skippedStep } from "./_sweep_steps.ts";
import { PUBSUB_MODES, type PubSubMode, pubSubMode } from "../../pubsub/payload.ts";
import { pubSubPlan } from "../../pubsub/engine.ts";
import type { PubSubCall, PubSubStepRun } from "../../pubsub/step.ts";
import type { Tool } from "../../tools/tool.ts";
import { toolFor } from "../tools.ts";
import { cellRecord, interleavedCells, type PlanKind, type PlanReader } from "../kind.ts";
import type { CellRunner, KindContext, PlanBase, PlanCellBase, PlanCommon } from "../kind.ts";

/** A checked plan of kind `pubsub`. */
export interface PubSubPlan extends PlanBase {
  kind: "pubsub";
  modes: PubSubMode[];
  publishers: number;
  subscribers: number;
  /** Channels; null: one per subscriber ÷ fan-out. */
  channels: number | null;
  /** Subscribers per channel in `fan-out` and `sharded` modes; null: all (fan-out), 1 (sharded). */
  fanOut: number | null;
  payloadBytes: number;
  /** Target delivery rates, increasing. */
  rates: number[];
  stepS: number;
  graceS: number;
}

/** One step to run: a server, a mode, a target delivery rate and a repetition. */
export interface PubSubCell extends PlanCellBase {
  /** Stable id: `<plan>/<server>/<mode>-r<rate>/rep<k>`. */
  id: string;
  mode: PubSubMode;
  /** Target (requested) delivery rate, deliveries per second. */
  requestedOpsPerSec: number;
}

const S = "pubsub";
const SECTION_FIELDS = [
  "modes",
  "publishers",
  "subscribers",
  "channels",
  "fan_out",
  "payload_bytes",
  "rates",
  "step_s",
  "grace_s",
];

/**
 * The engine call of a cell.
 *
 * @param plan The plan.
 * @param cell One of its cells.
 * @returns The step, for {@link runPubSubStep}.
 *
 * @example
 * ```ts
 * import { parsePlan, planCells, pubSubCall, pubSubCommand } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan(
 *   "name: ps\nkind: pubsub\nservers: [{name: a, url: 'redis://h:1'}]\n" +
 *     "pubsub: {modes: [one-to-one, fan-out], publishers: 4, subscribers: 8, fan_out: 4, rates: [1000, 5000]}\n",
 *   "ps.yaml",
 * );
 * assert.ok(plan.kind === "pubsub");
 * const cells = planCells(plan);
 * assert.deepEqual(cells.map((c) => c.id.split("/")[2]),
 *   ["one-to-one-r1000", "one-to-one-r5000", "fan-out-r1000", "fan-out-r5000"]);
 * assert.equal(pubSubCommand(pubSubCall(plan, cells[2])),
 *   "kvlab pubsub --url redis://h:1 --mode fan-out --publishers 4 --subscribers 8 --fan-out 4 " +
 *     "--payload 128 --rate 1000 --duration 10 --grace 2");
 * ```
 */
export function pubSubCall(plan: PubSubPlan, cell: PubSubCell): PubSubCall {
  return {
    target: cell.server.target,
    mode: cell.mode,
    publishers: plan.publishers,
    subscribers: plan.subscribers,
    channels: plan.channels ?? undefined,
    fanOut: cell.mode === "one-to-one" ? undefined : plan.fanOut ?? undefined,
    payloadBytes: plan.payloadBytes,
    requestedOpsPerSec: cell.requestedOpsPerSec,
    durationS: plan.stepS,
    graceS: plan.graceS,
    timeoutS: plan.timeoutS,
  };
}

/** The `pubsub` plan kind. */
export const pubSubKind: PlanKind<PubSubPlan, PubSubCell> = {
  fields: [S],
  parse: parsePubSubPlan,
  tags: [
    "mode",
    "publishers",
    "subscribers",
    "fan_out",
    "payload_bytes",
    "requested_ops_per_sec",
    "sweep_rates",
  ],
  count: (plan) => plan.repetitions * plan.modes.length * plan.rates.length * plan.servers.length,
  cells: pubSubCells,
  describe: describePubSubCell,
  open: openPubSub,
};

/** Reads the kind's fields of a plan (errors carry file:line). */
function parsePubSubPlan(read: PlanReader, common: PlanCommon): PubSubPlan {
  read.section([S], SECTION_FIELDS, "expected { modes, publishers, subscribers, rates, … }");

  const has = (k: string) => read.value([S, k]) !== undefined;
  const modes = listOf(read, "modes", ["one-to-one"]).map((_, i, all) => {
    const path = Array.isArray(read.value([S, "modes"])) ? [S, "modes", i] : [S, "modes"];
    const text = read.string(path);
    if (!PUBSUB_MODES.includes(text as PubSubMode)) {
      read.fail(path, `expected ${PUBSUB_MODES.join(", ")}`);
    }
    if (all.indexOf(all[i]) !== i) read.fail(path, "duplicate mode");
    return pubSubMode(text);
  });
  const rates = listOf(read, "rates").map((_, i) => {
    const path = Array.isArray(read.value([S, "rates"])) ? [S, "rates", i] : [S, "rates"];
    // kvlab's engine cannot send above its limit (`../../limits.ts`)
    return read.number(path, NaN, { max: LIMITS.kvlabRate.max, positive: true });
  });
  if (rates.some((r, i) => i > 0 && r <= rates[i - 1])) {
    read.fail([S, "rates"], "expected increasing target delivery rates");
  }
  const plan: PubSubPlan = {
    ...common,
    kind: "pubsub",
    modes,
    publishers: read.integer([S, "publishers"], 64),
    subscribers: read.integer([S, "subscribers"], 100),
    channels: has("channels") ? read.integer([S, "channels"]) : null,
    fanOut: has("fan_out") ? read.integer([S, "fan_out"]) : null,
    payloadBytes: read.integer([S, "payload_bytes"], 128, 16),
    rates,
    stepS: read.number([S, "step_s"], 10, { max: 3600, positive: true }),
    graceS: read.number([S, "grace_s"], 2, { max: 600 }),
  };
  for (
    const [k, v, limit] of [
      ["publishers", plan.publishers, LIMITS.connections],
      ["subscribers", plan.subscribers, LIMITS.connections],
      ["payload_bytes", plan.payloadBytes, LIMITS.payloadBytes],
    ] as const
  ) {
    const why = limitProblem(v, limit);
    if (why) read.fail([S, k], why);
  }
  // the topology of each mode, checked now rather than when its first step runs
  for (
    const cell of pubSubKind.cells({ ...plan, repetitions: 1, servers: plan.servers.slice(0, 1) })
  ) {
    try {
      const { target: _, ...engine } = pubSubCall(plan, cell);
      pubSubPlan({ ...engine, port: 1 });
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      read.fail([S, has("fan_out") ? "fan_out" : "subscribers"], `${cell.mode}: ${e.message}`);
    }
  }
  return plan;
}

/** The plan's cells, interleaved across servers and repetitions. */
function pubSubCells(plan: PubSubPlan): PubSubCell[] {
  const points = plan.modes.flatMap((mode) =>
    plan.rates.map((requestedOpsPerSec) => ({ mode, requestedOpsPerSec }))
  );
  return interleavedCells(plan, points, (p) => `${p.mode}-r${p.requestedOpsPerSec}`);
}

/** The command a cell runs, as `--dry-run` and progress show it (secrets redacted). */
function describePubSubCell(plan: PubSubPlan, cell: PubSubCell) {
  return {
    command: engine().command(pubSubCall(plan, cell)),
    requests: Math.ceil(cell.requestedOpsPerSec * plan.stepS),
  };
}

/** Prepares the plan's runs once; returns the function that runs one cell. */
function openPubSub(plan: PubSubPlan, ctx: KindContext): Promise<CellRunner<PubSubCell>> {
  const sweeps = storedSweeps(plan, ctx.data);
  const runCell = async (cell: PubSubCell): Promise<CollectedRun> => {
    const key = sweepKey(cell);
    const skip = sweeps.skipReason(key, cell.requestedOpsPerSec, {
      label: cell.label,
      unit: " deliveries/s",
      detail: `${cell.mode}, repetition ${cell.repetition}`,
    });
    if (skip !== null) return skippedStep(skip);
    const call = pubSubCall(plan, cell);
    const record = {
      data: ctx.data,
      label: cell.label,
      ...cellRecord(plan, cell, {
        mode: cell.mode,
        publishers: String(plan.publishers),
        subscribers: String(plan.subscribers),
        fan_out: String(call.fanOut ?? 1),
        payload_bytes: String(plan.payloadBytes),
        requested_ops_per_sec: String(cell.requestedOpsPerSec),
        // every rate of the sweep, so the analysis shows steps not run after an NS as `-`
        sweep_rates: plan.rates.join(","),
      }),
      host: ctx.host,
      now: ctx.now,
    };
    const run = await engine().run(call, {
      ...record,
      runner: ctx.runner,
      timeoutMs: plan.timeoutS * 1000,
      signal: ctx.signal,
      toolVersion: null,
    });
    // the rule on the runner's rates, as typed (no read-back); a failed step is not judged
    if (run.result) {
      sweeps.note(key, {
        requestedOpsPerSec: cell.requestedOpsPerSec,
        achievedOpsPerSec: run.result.achievedOpsPerSec,
      });
    }
    return run;
  };
  return Promise.resolve(runCell);
}

/** kvlab's pub/sub engine, from the registry. */
function engine(): Tool<PubSubCall, PubSubStepRun> {
  return toolFor("kvlab-pubsub", "kvlab-pubsub");
}

/** Steps of one sweep: a server, a mode, a repetition. */
function sweepKey(cell: PubSubCell): string {
  return `${cell.server.name}\n${cell.mode}\n${cell.repetition}`;
}

/**
 * Each sweep's NS steps among the runs already stored (for a resumed plan): the verdict each
 * complete run keeps in its manifest.
 */
function storedSweeps(plan: PubSubPlan, data: string): SkipAfterNs {
  const out = new SkipAfterNs();
  const cells = new Map(pubSubKind.cells(plan).map((c) => [c.id, c]));
  const ds = Dataset.of(data);
  const ofPlan = { where: pl.col("plan_name").eq(pl.lit(plan.name)) };
  for (const m of ds.runFacts(["run_id", "plan_name", "plan_cell", "status"], ofPlan)) {
    const cell = cells.get(String(m.plan_cell));
    if (m.plan_name !== plan.name || !cell || m.status !== "complete") continue;
    const manifest = ds.runManifest(String(m.run_id)) as { pubsub?: { verdict?: string } };
    if (manifest?.pubsub?.verdict !== "NS") continue;
    out.noteNs(sweepKey(cell), cell.requestedOpsPerSec);
  }
  return out;
}

/** A list field (or one value); `dflt` when absent. */
function listOf(read: PlanReader, k: string, dflt?: unknown[]): unknown[] {
  const v = read.value([S, k]);
  if (v === undefined && dflt) return dflt;
  if (v === undefined) read.fail([S, k], "required");
  if (!Array.isArray(v)) return [v];
  return read.list([S, k], "expected at least one value");
}
