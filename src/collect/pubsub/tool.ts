/**
 * kvlab's pub/sub engine as a {@link Tool}: an engine inside kvlab (nothing to find, kvlab's
 * version), its calls shown as the `kvlab pubsub` command that runs the same step, each call one
 * stored run ({@link runPubSubStep}).
 *
 * @module
 */

import { prepareEngine, type Tool } from "../tools/tool.ts";
import {
  pubSubArgv,
  type PubSubCall,
  pubSubCommand,
  type PubSubStepRun,
  runPubSubStep,
} from "./step.ts";

/**
 * kvlab's pub/sub delivery engine (`kvlab pubsub`, `kind: pubsub`).
 *
 * @example
 * ```ts
 * import { kvlabPubSubTool, parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const call = { target: parseServerUrl("redis://h:1"), mode: "fan-out" as const, publishers: 1,
 *   subscribers: 2, requestedOpsPerSec: 10, durationS: 1 };
 * assert.equal(
 *   kvlabPubSubTool.command(call),
 *   "kvlab pubsub --url redis://h:1 --mode fan-out --publishers 1 --subscribers 2 --rate 10 --duration 1",
 * );
 * ```
 */
export const kvlabPubSubTool: Tool<PubSubCall, PubSubStepRun> = {
  name: "kvlab-pubsub",
  programs: ["kvlab"],
  external: false,
  formats: [],
  prepare: () => prepareEngine("kvlab"),
  argv: pubSubArgv,
  command: pubSubCommand,
  run: (call, ctx) =>
    runPubSubStep({ ...call, signal: ctx.signal }, {
      data: ctx.data,
      label: ctx.label,
      tags: ctx.tags,
      plan: ctx.plan,
      watch: ctx.watch,
      host: ctx.host,
      now: ctx.now,
    }),
};
