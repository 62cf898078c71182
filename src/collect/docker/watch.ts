/**
 * The watch of a server's container over a run (a {@link RunWatch} of `../collector.ts`): its
 * facts from `docker inspect` (image, memory limit, CPU quota) as the run starts, its
 * `docker stats` once a second while the run measures (`container_stats` rows, the container's
 * JSON lines kept as the run's raw `docker-stats.jsonl`), and its state as the run ends: a
 * container the kernel killed for lack of memory (or that exited) fails the run, with that
 * reason. What docker cannot say (no engine, no such container) is a warning of the run, never
 * its failure.
 *
 * @module
 */

import type { ContainerStatsRow } from "../../schema.ts";
import type { RunWatch, RunWatching, WatchColumns, Watched } from "../collector.ts";
import { parseDockerStats } from "../formats/docker_stats/docker_stats.ts";
import type { DockerEngine } from "./engine.ts";
import { containerEnd, type ContainerFacts, inspectContainer } from "./container.ts";
import { StatsStreamFilter, type StreamSample } from "./stats.ts";

/** Options of {@link containerWatch}. */
export interface ContainerWatchOptions {
  /** The engine that runs the container. */
  engine: DockerEngine;
  /** The container's name. */
  name: string;
  /** @default {1000} */
  intervalMs?: number;
  /** The longest run watched (the stats stream is bounded too). @default {604800000} (a week) */
  maxMs?: number;
}

/** The raw file a watched run keeps. */
export const DOCKER_STATS_RAW = "docker-stats.jsonl";

/**
 * The `container_stats` rows of a run's kept samples.
 *
 * @param runId The run.
 * @param samples The container's JSON lines, as kept ({@link StatsStreamFilter}).
 * @returns One row per sample; `source_line` is its line in `docker-stats.jsonl`.
 *
 * @example
 * ```ts
 * import { containerStatsRows } from "./watch.ts";
 * import assert from "node:assert/strict";
 * const text = '{"BlockIO":"0B / 0B","CPUPerc":"0.00%","ID":"e209","MemPerc":"5.24%",' +
 *   '"MemUsage":"3.352MiB / 64MiB","Name":"kvlab-redis","NetIO":"0B / 0B","PIDs":"5"}';
 * const [row, next] = containerStatsRows("r1", [{ text, atMs: 1500 }, { text, atMs: 2500 }]);
 * assert.deepEqual(
 *   [row.sample, row.elapsed_s, row.cpu_pct, row.memory_bytes, row.memory_limit_bytes, row.pids, row.source_line],
 *   [0, 1.5, null, Math.round(3.352 * 2 ** 20), 64 * 2 ** 20, 5, 1],
 * );
 * assert.equal(next.cpu_pct, 0); // a 0.00 % after the first is one
 * ```
 */
export function containerStatsRows(
  runId: string,
  samples: readonly StreamSample[],
): ContainerStatsRow[] {
  return samples.flatMap((s, i) =>
    parseDockerStats(s.text, i + 1).map((r) => ({
      run_id: runId,
      sample: i,
      elapsed_s: s.atMs / 1000,
      container_name: r.name,
      // a first reading with no earlier one to take CPU time from prints 0.00 %: not a measure
      cpu_pct: i === 0 && r.cpuPercent === 0 ? null : r.cpuPercent,
      memory_bytes: r.memUsageBytes,
      memory_limit_bytes: r.memLimitBytes,
      pids: r.pids,
      source_line: r.line,
    }))
  );
}

/**
 * The `runs` columns of a container's facts.
 *
 * @param f What `docker inspect` said, at the start and at the end of the run.
 * @returns The container columns.
 */
function factColumns(f: ContainerFacts, end: ContainerFacts | null): WatchColumns {
  return {
    container_name: f.name,
    container_image: f.image,
    container_memory_limit_bytes: f.memoryLimitBytes,
    container_cpus: f.cpus,
    container_oom_killed: end ? end.state.oomKilled : null,
  };
}

/**
 * Watches a container over each run it is given to.
 *
 * @param o The engine and the container.
 * @returns The watch (`watch` of a collector's options).
 */
export function containerWatch(o: ContainerWatchOptions): RunWatch {
  return { start: () => startWatching(o) };
}

/** Takes the container's facts and starts its stats stream. */
async function startWatching(o: ContainerWatchOptions): Promise<RunWatching> {
  const t0 = performance.now();
  const warnings: string[] = [];
  let facts: ContainerFacts | null = null;
  try {
    facts = await inspectContainer(o.engine, o.name);
  } catch (e) {
    warnings.push(`docker inspect ${o.name}: ${(e as Error).message}`);
  }
  const filter = new StatsStreamFilter(o.name, o.intervalMs ?? 1000);
  const stop = new AbortController();
  const dec = new TextDecoder();
  let stream: Promise<unknown> = Promise.resolve();
  if (facts?.state.running) {
    // all running containers: `docker stats NAME` would not end on a signal (module doc)
    stream = o.engine.runner.run({
      argv: ["docker", "stats", "--format", "{{json .}}"],
      timeoutMs: o.maxMs ?? 604_800_000,
      signal: stop.signal,
      onStdout: (chunk) => filter.push(dec.decode(chunk, { stream: true }), performance.now() - t0),
    }).catch((e) => warnings.push(`docker stats: ${(e as Error).message}`));
  }
  return {
    stop: async (runId, failed) => {
      filter.close();
      stop.abort();
      await stream;
      const end = facts ? await finalState(o, failed) : null;
      if (end instanceof Error) warnings.push(`docker inspect ${o.name}: ${end.message}`);
      const last = end instanceof Error ? null : end;
      const rows = containerStatsRows(runId, filter.samples);
      if (facts?.state.running && rows.length === 0 && !failed) {
        warnings.push(`docker stats gave no sample of ${o.name}`);
      }
      const watched: Watched = {
        tables: { container_stats: rows },
        raw: filter.samples.length
          ? [{
            name: DOCKER_STATS_RAW,
            bytes: new TextEncoder().encode(filter.samples.map((s) => s.text + "\n").join("")),
          }]
          : [],
        columns: facts ? factColumns(facts, last) : { container_name: o.name },
        failure: last ? containerEnd(last) : null,
        warning: warnings.length ? warnings.join("; ") : null,
      };
      return watched;
    },
  };
}

/**
 * The container's state as the run ends. After a run that did not complete, a container still
 * said to run is asked again for up to 2 s: the kernel's kill reaches docker a moment after the
 * client saw its connection drop.
 */
async function finalState(
  o: ContainerWatchOptions,
  failed: boolean,
): Promise<ContainerFacts | Error> {
  for (let i = 0;; i++) {
    let f: ContainerFacts;
    try {
      f = await inspectContainer(o.engine, o.name);
    } catch (e) {
      return e as Error;
    }
    if (!f.state.running || !failed || i >= 20) return f;
    await new Promise((r) => setTimeout(r, 100));
  }
}
