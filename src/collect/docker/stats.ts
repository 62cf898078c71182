/**
 * `docker stats` as kvlab runs it: one sample (`--no-stream`, the memory sweep's per-step
 * container memory and `kvlab sample --container`), and the stream of every running container
 * (`docker stats --format '{{json .}}'`) that a run's watch reads (`./watch.ts`). The stream is
 * read without a container name: `docker stats NAME` (client 28.2) ignores SIGTERM and SIGINT
 * (docker/cli#6090), while the stream of all containers ends at once; the lines of other
 * containers are dropped. The stream reprints every 500 ms with cursor codes; a sample is kept
 * per interval.
 *
 * @module
 */

import {
  type DockerStatsRow,
  parseDockerStats,
  stripCursorCodes,
} from "../formats/docker_stats/docker_stats.ts";
import { type ProcessRunner, ToolNotFoundError } from "../process.ts";
import { DockerUnavailableError } from "./engine.ts";

/**
 * One `docker stats --no-stream --format '{{json .}}' [NAME]` sample.
 *
 * @param runner Starts the client.
 * @param container The container, or every running one.
 * @returns One row per container.
 * @throws {DockerUnavailableError} When docker is missing or no engine answers (with docker's
 * own message, e.g. "Cannot connect to the Docker daemon at unix:///var/run/docker.sock").
 */
export async function dockerStats(
  runner: ProcessRunner,
  container?: string,
): Promise<DockerStatsRow[]> {
  let r;
  try {
    r = await runner.run({
      argv: [
        "docker",
        "stats",
        "--no-stream",
        "--format",
        "{{json .}}",
        ...(container ? [container] : []),
      ],
      timeoutMs: 15_000,
      capture: true,
    });
  } catch (e) {
    if (e instanceof ToolNotFoundError) {
      throw new DockerUnavailableError("docker: not found on PATH (no Docker client)");
    }
    throw e;
  }
  const err = new TextDecoder().decode(r.stderr ?? new Uint8Array()).trim();
  if (r.code !== 0) {
    throw new DockerUnavailableError(
      `docker stats failed (exit ${r.code ?? r.signal}): ${err || "no message"}` +
        (/Cannot connect to the Docker daemon/.test(err)
          ? " — no Docker engine is running here; container memory is left empty"
          : ""),
    );
  }
  return parseDockerStats(new TextDecoder().decode(r.stdout ?? new Uint8Array()));
}

/** One kept line of the stream: the container's JSON line and when it arrived. */
export interface StreamSample {
  /** The JSON line, cursor codes removed. */
  text: string;
  /** Milliseconds since the watch began. */
  atMs: number;
}

/**
 * Keeps, from the lines of a `docker stats --format '{{json .}}'` stream, those of one container,
 * at most one per `intervalMs` (the client reprints its last figures every 500 ms, and twice per
 * frame; the engine refreshes them once a second).
 */
export class StatsStreamFilter {
  readonly samples: StreamSample[] = [];
  #pending = "";
  #last = -Infinity;
  #closed = false;

  /**
   * @param name The container's name.
   * @param intervalMs The least time between two kept samples (a frame arrives every 500 ms).
   */
  constructor(readonly name: string, readonly intervalMs = 1000) {}

  /** Takes nothing more: the client, stopped, prints a last frame of `--`. */
  close(): void {
    this.#closed = true;
  }

  /**
   * Takes a chunk of the stream as it arrives.
   *
   * @param text The chunk, decoded.
   * @param atMs When it arrived, ms since the watch began.
   *
   * @example
   * ```ts
   * import { StatsStreamFilter } from "./stats.ts";
   * import assert from "node:assert/strict";
   * const f = new StatsStreamFilter("a");
   * const line = (name: string, mem: string) => `{"MemUsage":"${mem} / 1GiB","Name":"${name}"}`;
   * f.push(`\x1b[H${line("a", "3MiB")}\n\x1b[H${line("a", "3MiB")}\n \x1b[K\n`, 0);
   * const next = line("a", "4MiB"); // arrives in two chunks
   * f.push(`\x1b[J\x1b[H${line("b", "9MiB")}\n\x1b[J\x1b[H${next.slice(0, 20)}`, 500);
   * f.push(`${next.slice(20)}\n\x1b[H${next}\n`, 1000);
   * assert.deepEqual(f.samples.map((s) => [s.text, s.atMs]), [
   *   [line("a", "3MiB"), 0],
   *   [line("a", "4MiB"), 1000],
   * ]);
   * ```
   */
  push(text: string, atMs: number): void {
    if (this.#closed) return;
    const lines = (this.#pending + text).split("\n");
    this.#pending = lines.pop() ?? "";
    for (const raw of lines) {
      const t = stripCursorCodes(raw).trim();
      if (!t.startsWith("{")) continue;
      let name: unknown;
      try {
        name = (JSON.parse(t) as Record<string, unknown>).Name;
      } catch {
        continue;
      }
      // 750 ms: the frames come every 500 ms, a little late at times
      if (name !== this.name || atMs - this.#last < 0.75 * this.intervalMs) continue;
      this.#last = atMs;
      this.samples.push({ text: t, atMs });
    }
  }
}
