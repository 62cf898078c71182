/**
 * kvlab's pub/sub delivery-latency engine (issue 14): payload header and topology, the
 * subscriber push reader, and `runPubSub`, one open-loop step in one mode.
 *
 * @module
 */

export * from "./payload.ts";
export * from "./push.ts";
export * from "./engine.ts";
export * from "./step.ts";
export * from "./rows.ts";
export * from "./tool.ts";
