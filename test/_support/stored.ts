/**
 * Rows written to a dataset as they were stored, for tests that need what today's collectors no
 * longer write (an older kvlab's rows, another schema version).
 *
 * @module
 */

/** The smallest valid `runs` row of a redis-benchmark run, with `extra` fields over it. */
export function minimalRun(runId: string, extra: Record<string, unknown> = {}) {
  return {
    run_id: runId,
    tool: "redis-benchmark",
    server: "redis",
    transport: "tcp",
    tags: "{}",
    ingested_at: new Date(),
    status: "complete",
    output_format: "quiet",
    warning_count: 0,
    ...extra,
  };
}

/** A complete `results` row of test `test` (its title the same) at `ops` requests per second. */
export function resultRow(
  runId: string,
  test: { test: string; index: number; ops: number },
  extra: Record<string, unknown> = {},
) {
  return {
    run_id: runId,
    test_index: test.index,
    test: test.test,
    test_title: test.test,
    ops_per_sec: test.ops,
    complete: true,
    source_line: test.index + 1,
    ...extra,
  };
}
