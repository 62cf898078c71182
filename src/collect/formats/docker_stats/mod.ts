/**
 * `docker stats` output: the table (`--no-stream`, as pasted into posts) and `--format
 * '{{json .}}'` lines.
 *
 * @module
 */

export * from "./docker_stats.ts";
export * from "./format.ts";
