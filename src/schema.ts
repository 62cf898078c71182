/**
 * The kvlab dataset schema: the tables, their columns and types. This is the only contract
 * between `collect` (which writes datasets) and `analyze` (which reads them). SCHEMA.md says
 * the same in prose; a test keeps the two in step.
 *
 * Where the tables are on disk (batches, raw files, claims, locks) is not part of this module:
 * SCHEMA.md's "Layout" describes it, and `src/store/` alone reads and writes it (see
 * `store/dataset.ts`).
 *
 * @module
 */

import * as more from "./schema_tables.ts";
/** Version of the schema written by this kvlab. Readers accept any `1.x`. */
export const SCHEMA_VERSION = "1.10";

/** Major version readers of this kvlab accept. */
export const SCHEMA_MAJOR = 1;

/** Logical column types; each maps to one Parquet / polars type. */
export type ColumnType = "string" | "int" | "float" | "bool" | "timestamp";

/** One column of a table. */
export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  /** Whether the column may hold nulls. */
  readonly nullable: boolean;
  readonly doc: string;
}

/** A column spec whose name, type and nullability are kept as literal types. */
interface Col<N extends string, T extends ColumnType, Nl extends boolean> extends ColumnSpec {
  readonly name: N;
  readonly type: T;
  readonly nullable: Nl;
}

// positional: one column per line below, read as a table (name, type, nullable, doc)
const c = <const N extends string, const T extends ColumnType, const Nl extends boolean>(
  name: N,
  type: T,
  nullable: Nl,
  doc: string,
): Col<N, T, Nl> => ({ name, type, nullable, doc });

/**
 * String columns that hold a JSON object (`runs.tags`): `--format json` output gives them as
 * objects, not as strings of JSON.
 *
 * @example
 * ```ts
 * import { JSON_TEXT_COLUMNS } from "./schema.ts";
 * import assert from "node:assert/strict";
 * assert.ok(JSON_TEXT_COLUMNS.has("tags"));
 * ```
 */
export const JSON_TEXT_COLUMNS: ReadonlySet<string> = new Set(["tags"]);

/** `runs`: one row per run. */
export const RUNS = [
  c("run_id", "string", false, "Unique id made by the writer: `<UTC yyyymmddThhmmssZ>-<12 hex>`."),
  c("schema_version", "string", false, "Schema version the run was written with."),
  c("kvlab_version", "string", false, "kvlab version that wrote the run."),
  c("tool", "string", false, "redis-benchmark, valkey-benchmark, redis-cli, docker, … or unknown."),
  c("tool_version", "string", true, "Version of the tool, when known."),
  c("command", "string", true, "The exact command line, secrets redacted as ***."),
  c("server", "string", false, "redis, valkey, dragonfly, keydb, … or unknown."),
  c("server_version", "string", true, "Server version, when known."),
  c("host", "string", true, "Machine the tool ran on (from the prompt or the host snapshot)."),
  c("target", "string", true, "Server address as given to the tool (-h/-p, -s, -u), redacted."),
  c("transport", "string", false, "tcp, tls, unix or rdma."),
  c("label", "string", true, "User label for the run (e.g. a study arm)."),
  c("tags", "string", false, "JSON object of user tags (k=v)."),
  c("started_at", "timestamp", true, "When the run started (UTC), when known."),
  c("ingested_at", "timestamp", false, "When kvlab wrote the run (UTC)."),
  c("status", "string", false, "complete, incomplete (cut or interrupted) or failed."),
  c(
    "output_format",
    "string",
    false,
    "full, full-legacy, quiet, quiet-legacy, csv, csv-legacy, mixed, none, raw; memtier: json, stdout, progress.",
  ),
  c("error", "string", true, "Error printed by the tool, for failed runs."),
  c("warning_count", "int", false, "Number of parse warnings (listed in run.json)."),
  c("source_path", "string", true, "Path of the ingested file, as given."),
  c("source_sha256", "string", true, "SHA-256 of the whole ingested file."),
  c("source_line_start", "int", true, "First line of this run's block in the source file."),
  c("source_line_end", "int", true, "Last line of this run's block in the source file."),
  // 1.1: live collection
  c("finished_at", "timestamp", true, "When the run ended (UTC), for collected runs."),
  c("tool_exit_code", "int", true, "Exit code of the tool (null when killed by a signal)."),
  c("plan_name", "string", true, "Study plan that made the run."),
  c("plan_cell", "string", true, "Id of the plan cell (server × parameters × repetition)."),
  c("repetition", "int", true, "1-based repetition of the plan cell."),
  c("server_io_threads", "int", true, "Server io-threads (CONFIG or INFO), when known."),
  c("server_maxmemory_bytes", "int", true, "Server maxmemory (0 = no limit), when known."),
  c("server_config_status", "string", true, "CONFIG GET: ok, refused (managed services) or error."),
  c("host_cpu_model", "string", true, "CPU model of the machine the tool ran on."),
  c("host_cpu_count", "int", true, "Logical CPUs of that machine."),
  c("host_memory_bytes", "int", true, "Memory of that machine."),
  c("host_kernel", "string", true, "Kernel release of that machine."),
  c("host_os", "string", true, "Operating system of that machine."),
  c("deno_version", "string", true, "Deno version kvlab ran on."),
  // 1.2: memory studies
  c(
    "raw_sha256",
    "string",
    true,
    "SHA-256 of the run's raw output (its block of a transcript), before redaction.",
  ),
  // 1.3: memtier, server CPU
  c(
    "server_cpu_user_s",
    "float",
    true,
    "Server CPU time in user mode over the run: INFO used_cpu_user after − before.",
  ),
  c(
    "server_cpu_sys_s",
    "float",
    true,
    "Server CPU time in kernel mode over the run: INFO used_cpu_sys after − before.",
  ),
  // 1.4: how quiet the machine was (live runs on Linux; null when not measured)
  c(
    "noise_other_cpu_pct",
    "float",
    true,
    "Other processes' CPU over the run, % of all CPUs' time (/proc/stat busy less kvlab, its tools and a local server).",
  ),
  c(
    "noise_own_cpu_pct",
    "float",
    true,
    "CPU of kvlab, its tools and a local server over the run, % of all CPUs' time.",
  ),
  c("noise_steal_pct", "float", true, "Steal time over the run, % of all CPUs' time."),
  c("noise_iowait_pct", "float", true, "iowait over the run, % of all CPUs' time."),
  c("load1_before", "float", true, "1-minute load average before the run."),
  c("load1_after", "float", true, "1-minute load average after the run."),
  c("cpu_governor", "string", true, "CPU 0's frequency governor, or `unknown`."),
  c("cpu_turbo", "string", true, "Turbo boost: `on`, `off` or `unknown`."),
  c(
    "client_server_share_cpus",
    "bool",
    true,
    "Whether kvlab (and its tools) and a local server may run on a common CPU; null when unknown.",
  ),
  c(
    "noise_disturbance",
    "string",
    true,
    "Why the run was disturbed (other CPU > 10 %, steal > 2 %, iowait > 5 %, load > CPUs), or null.",
  ),
  // 1.7: servers in containers (null when the server is in none)
  c("container_name", "string", true, "The Docker container of the server, watched over the run."),
  c("container_image", "string", true, "Its image (`kvlab/redis:7.0.15` for one kvlab started)."),
  c("container_memory_limit_bytes", "int", true, "Its memory limit (`--memory`); null if none."),
  c("container_cpus", "float", true, "Its CPU quota (`docker run --cpus`); null when it has none."),
  c("container_oom_killed", "bool", true, "Whether it was killed for lack of memory (OOM)."),
] as const;

/** `results`: one row per test per run. */
export const RESULTS = [
  c("run_id", "string", false, "The run."),
  c("test_index", "int", false, "0-based order of the test in the run's output."),
  c("test", "string", false, "Normalized test: SET, LRANGE_100, LPUSH_FOR_LRANGE, MSET, …"),
  c("test_title", "string", false, "The title as printed: `LRANGE_100 (first 100 elements)`."),
  c("clients", "int", true, "Parallel clients (-c)."),
  c("threads", "int", true, "Client threads (--threads; 1 when multi-thread: no)."),
  c("pipeline", "int", true, "Pipeline depth (-P)."),
  c("data_size_bytes", "int", true, "Value size in bytes (-d)."),
  c("requests", "int", true, "Requests (-n, or `N requests completed`)."),
  c("keyspace", "int", true, "Random keyspace length (-r); null when not randomized."),
  c("duration_s", "float", true, "Test duration, seconds."),
  c("ops_per_sec", "float", true, "Throughput, requests per second. Null for incomplete tests."),
  c("avg_latency_ms", "float", true, "Mean latency, ms."),
  c("min_latency_ms", "float", true, "Minimum latency, ms."),
  c("p50_latency_ms", "float", true, "Median latency, ms."),
  c("p95_latency_ms", "float", true, "95th percentile latency, ms."),
  c("p99_latency_ms", "float", true, "99th percentile latency, ms."),
  c("p999_latency_ms", "float", true, "99.9th percentile latency, ms (memtier)."),
  c("max_latency_ms", "float", true, "Maximum latency, ms."),
  c("keep_alive", "bool", true, "keep alive: 1 (true) or 0."),
  c("host_config_save", "string", true, 'host configuration "save" as printed.'),
  c("host_config_appendonly", "string", true, 'host configuration "appendonly" as printed.'),
  c("cluster_nodes", "int", true, "Cluster nodes in --cluster mode."),
  c("requested_ops_per_sec", "float", true, "Requested rate of a rate-limited run."),
  c("rate_avg_ops_per_sec", "float", true, "Valkey --rps summary: mean achieved rate."),
  c("rate_min_ops_per_sec", "float", true, "Valkey --rps summary: minimum."),
  c("rate_p50_ops_per_sec", "float", true, "Valkey --rps summary: median."),
  c("rate_p95_ops_per_sec", "float", true, "Valkey --rps summary: p95."),
  c("rate_p99_ops_per_sec", "float", true, "Valkey --rps summary: p99."),
  c("rate_max_ops_per_sec", "float", true, "Valkey --rps summary: maximum."),
  c("hits_per_sec", "float", true, "GET hits per second (memtier)."),
  c("misses_per_sec", "float", true, "GET misses per second (memtier)."),
  c("throughput_kb_per_sec", "float", true, "Network throughput, KB/sec (memtier)."),
  c("aggregate", "string", true, "For tools that summarize repetitions: best, worst, average."),
  c("run_index", "int", true, "Repetition inside one tool invocation (memtier --run-count)."),
  c(
    "last_progress_ops_per_sec",
    "float",
    true,
    "Last live-progress rate of a test cut off: never a result.",
  ),
  // 1.3: fixed-rate steps and pub/sub delivery
  c(
    "latency_basis",
    "string",
    true,
    "send (timed from the actual send; every tool's) or intended (from the scheduled send time).",
  ),
  c("p50_send_latency_ms", "float", true, "Median timed from the actual send (intended rows)."),
  c("p99_send_latency_ms", "float", true, "p99 timed from the actual send (intended rows)."),
  c("send_lateness_p99_ms", "float", true, "p99 of the generator's own lateness in sending."),
  c("client_cpu_s", "float", true, "CPU time the load generator used over the test."),
  c("error_count", "int", true, "Error replies, disconnects and timeouts counted by kvlab."),
  c("moved_count", "int", true, "Cluster MOVED redirections kvlab followed (not errors)."),
  c("ask_count", "int", true, "Cluster ASK redirections kvlab followed (not errors)."),
  c("fan_out", "int", true, "Subscribers each published message is meant to reach."),
  c("messages_published", "int", true, "Pub/sub messages published."),
  c("messages_delivered", "int", true, "Deliveries received (a message × each subscriber)."),
  c("messages_lost", "int", true, "Deliveries never received within the step and its grace."),
  c("messages_duplicated", "int", true, "Deliveries received more than once."),
  // 1.3: a tool's own summary kept beside the number kvlab stored instead (cross-checked)
  c(
    "tool_ops_per_sec",
    "float",
    true,
    "The tool's printed rate when kvlab stored another (memtier's Totals on a wrong duration).",
  ),
  c("tool_duration_s", "float", true, "The tool's printed duration when kvlab stored another."),
  // 1.4: the generator's whole send delay, split, and its CPU per request (issue 20)
  c(
    "send_delay_p99_ms",
    "float",
    true,
    "p99 of the whole delay from the intended to the actual send (queue + lateness).",
  ),
  c(
    "send_queue_p99_ms",
    "float",
    true,
    "p99 of the send delay spent waiting for a connection busy with earlier requests.",
  ),
  c("client_cpu_us_per_request", "float", true, "Load generator CPU per request sent, µs."),
  c(
    "client_run_queue_s",
    "float",
    true,
    "Seconds the load generator's threads waited for a CPU another process held (Linux).",
  ),
  c("complete", "bool", false, "Whether the tool finished printing this test."),
  c("source_line", "int", false, "Line of the raw file the row was read from."),
] as const;

/** `latency_distribution`: rows of the distribution blocks. */
export const LATENCY_DISTRIBUTION = [
  c("run_id", "string", false, "The run."),
  c("test_index", "int", false, "Joins results.test_index."),
  c("test", "string", false, "Normalized test."),
  c(
    "distribution",
    "string",
    false,
    "percentile, cumulative or legacy (≤6.0 `x% <= N milliseconds`).",
  ),
  c("percentile", "float", false, "Percent of requests at or below latency_ms (0–100)."),
  c("latency_ms", "float", false, "Latency bound, ms."),
  c(
    "count",
    "int",
    true,
    "Cumulative count of requests at or below latency_ms; null in ≤6.0 output.",
  ),
  c("source_line", "int", false, "Line of the raw file."),
] as const;

/** `server_info` (1.1): INFO of the server before and after a run, one row per field. */
export const SERVER_INFO = [
  c("run_id", "string", false, "The run."),
  c("phase", "string", false, "before or after the run."),
  c("section", "string", false, "INFO section (Server, Memory, Keyspace, …)."),
  c("key", "string", false, "Field name (keyspace lines: `db0.keys`, `db0.expires`, …)."),
  c("value", "string", false, "Value as printed."),
  c("value_num", "float", true, "The value as a number, when it is one."),
] as const;

/** `server_config` (1.1): CONFIG GET * before and after a run (secrets redacted). */
export const SERVER_CONFIG = [
  c("run_id", "string", false, "The run."),
  c("phase", "string", false, "before or after the run."),
  c("key", "string", false, "Config parameter."),
  c("value", "string", false, "Value (requirepass, masterauth, … as ***)."),
] as const;

/** `memory` (1.2): memory views against key count, one row per measured step. */
export const MEMORY = [
  c("run_id", "string", false, "The run (the fill run of a transcript, or the sweep run)."),
  c("step", "int", false, "0-based step of the sweep (or of the transcript)."),
  c("server", "string", false, "Server, as on the run."),
  c("keys", "int", true, "Keys in the database (DBSIZE)."),
  c("target_keys", "int", true, "Keys the step aimed at (sweep target, or -n of the fill)."),
  c("value_size_bytes", "int", true, "Value size of the keys written."),
  c("used_memory_bytes", "int", true, "INFO used_memory (what the allocator holds)."),
  c("used_memory_rss_bytes", "int", true, "INFO used_memory_rss (resident set seen by the OS)."),
  c("used_memory_peak_bytes", "int", true, "INFO used_memory_peak."),
  c("process_rss_bytes", "int", true, "VmRSS of the server process from /proc (local servers)."),
  c("container_memory_bytes", "int", true, "docker stats MEM USAGE of the server's container."),
  c("container_name", "string", true, "The container that row came from."),
  c("source_line", "int", true, "Line of the transcript the step ends at (ingested steps)."),
  c("elapsed_s", "float", true, "Seconds since the run started (samplers and sweeps)."),
] as const;

/** `time_series` (1.3): per-second statistics of a test (memtier `Time-Serie`, progress lines). */
export const TIME_SERIES = [
  c("run_id", "string", false, "The run."),
  c("test_index", "int", true, "Joins results.test_index; null when the run has no such row."),
  c("test", "string", false, "Normalized test: SET, GET, WAIT, …, TOTALS."),
  c("run_index", "int", true, "Repetition inside one tool invocation (memtier --run-count)."),
  c(
    "source",
    "string",
    false,
    "json (memtier's per-second series), progress (its live line) or kvlab (kvlab's engines).",
  ),
  c("second", "int", false, "0-based second of the test (the last one is usually partial)."),
  c("count", "int", true, "Requests in that second (json)."),
  c("bytes_rx", "int", true, "Bytes received in that second (json)."),
  c("bytes_tx", "int", true, "Bytes sent in that second (json)."),
  c("ops_per_sec", "float", true, "Rate over the last second (progress)."),
  c("elapsed_s", "float", true, "Seconds since the test started, as the tool printed (progress)."),
  c("avg_latency_ms", "float", true, "Mean latency in that second, ms."),
  c("accumulated_latency_ms", "float", true, "Sum of that second's latencies, ms (json)."),
  c("min_latency_ms", "float", true, "Minimum latency in that second, ms."),
  c("max_latency_ms", "float", true, "Maximum latency in that second, ms."),
  c("p50_latency_ms", "float", true, "Median latency in that second, ms."),
  c("p99_latency_ms", "float", true, "99th percentile latency in that second, ms."),
  c("p999_latency_ms", "float", true, "99.9th percentile latency in that second, ms."),
  c("percentiles_json", "string", true, 'Every percentile of that second: `{"50": 0.27, …}` (ms).'),
  c("source_line", "int", false, "Line of the raw file."),
] as const;

/** `hdr_histograms` (1.3): compressed HdrHistograms, kept so runs merge exactly. */
export const HDR_HISTOGRAMS = [
  c("run_id", "string", false, "The run."),
  c("test_index", "int", true, "Joins results.test_index (FULL_RUN files join TOTALS); or null."),
  c("test", "string", false, "Normalized test: SET, GET, …, TOTALS (memtier's FULL_RUN)."),
  c("run_index", "int", true, "Repetition inside one tool invocation (memtier --run-count)."),
  c("aggregate", "string", true, "best, worst, average, or null for one run's own histogram."),
  c(
    "source",
    "string",
    false,
    "json (--json-out-file), hgrm (an interval log file) or kvlab (kvlab's engines).",
  ),
  c("source_file", "string", true, "Raw file the histogram was read from."),
  c("start_time", "timestamp", true, "Start of the interval the histogram covers (UTC)."),
  c("end_time", "timestamp", true, "End of that interval (UTC)."),
  c("lowest_discernible_value_us", "int", true, "HdrHistogram lowest discernible value, µs."),
  c("highest_trackable_value_us", "int", true, "HdrHistogram highest trackable value, µs."),
  c("significant_digits", "int", true, "HdrHistogram significant value digits."),
  c("total_count", "int", false, "Values recorded (requests)."),
  c("max_value_us", "float", true, "Largest value recorded, µs; null when empty."),
  c("compressed", "string", false, "The histogram: `HISTFAAA…` (base64, values in µs)."),
  c("derived", "bool", false, "Made by kvlab (e.g. per-type histograms added), not read."),
  c("latency_basis", "string", true, "send or intended, as in results; null means send."),
  c("source_line", "int", false, "Line of the raw file."),
] as const;

/** The tables of schema 1.x, by name. */
export const TABLES = {
  runs: RUNS,
  results: RESULTS,
  latency_distribution: LATENCY_DISTRIBUTION,
  server_info: SERVER_INFO,
  server_config: SERVER_CONFIG,
  memory: MEMORY,
  time_series: TIME_SERIES,
  hdr_histograms: HDR_HISTOGRAMS,
  agent_steps: more.AGENT_STEPS,
  container_stats: more.CONTAINER_STATS,
  failover_intervals: more.FAILOVER_INTERVALS,
  failover_events: more.FAILOVER_EVENTS,
  node_stats: more.NODE_STATS,
} as const;

/** Name of a table. */
export type TableName = keyof typeof TABLES;

/**
 * The column specs of a table.
 *
 * @throws {TypeError} For an unknown table name.
 *
 * @example
 * ```ts
 * import { tableSpec } from "@kvlab/kvlab/schema";
 * import assert from "node:assert/strict";
 * assert.equal(tableSpec("results")[0].name, "run_id");
 * assert.throws(() => tableSpec("nope"), /invalid table: nope/);
 * ```
 */
export function tableSpec(name: string): readonly ColumnSpec[] {
  if (Object.hasOwn(TABLES, name)) return TABLES[name as TableName];
  throw new TypeError(`invalid table: ${name} (known: ${Object.keys(TABLES).join(", ")})`);
}

/** A row of any table: values keyed by column name (checked against the table at write time). */
export type Row = Record<string, string | number | boolean | Date | null>;

/** The TypeScript type of a value of a column type. */
export type ValueOf<T extends ColumnType> = T extends "string" ? string
  : T extends "int" | "float" ? number
  : T extends "bool" ? boolean
  : Date;

/**
 * The row type of a table spec: non-nullable columns are required, nullable ones may be left
 * out (written as null). An object literal with a misspelt column is a compile error.
 */
export type RowOf<S extends readonly ColumnSpec[]> =
  & { [C in S[number] as C["nullable"] extends false ? C["name"] : never]: ValueOf<C["type"]> }
  & {
    [C in S[number] as C["nullable"] extends true ? C["name"] : never]?: ValueOf<C["type"]> | null;
  };

/** A `runs` row. */
export type RunsRow = RowOf<typeof RUNS>;
/** A `results` row. */
export type ResultsRow = RowOf<typeof RESULTS>;
/** A `latency_distribution` row. */
export type LatencyDistributionRow = RowOf<typeof LATENCY_DISTRIBUTION>;
/** A `server_info` row. */
export type ServerInfoRow = RowOf<typeof SERVER_INFO>;
/** A `server_config` row. */
export type ServerConfigRow = RowOf<typeof SERVER_CONFIG>;
/** A `memory` row. */
export type MemoryRow = RowOf<typeof MEMORY>;
/** A `time_series` row. */
export type TimeSeriesRow = RowOf<typeof TIME_SERIES>;
/** An `hdr_histograms` row. */
export type HdrHistogramsRow = RowOf<typeof HDR_HISTOGRAMS>;
/** An `agent_steps` row. */
export type AgentStepsRow = RowOf<typeof more.AGENT_STEPS>;
/** A `container_stats` row. */
export type ContainerStatsRow = RowOf<typeof more.CONTAINER_STATS>;
/** A `failover_intervals` row. */
export type FailoverIntervalsRow = RowOf<typeof more.FAILOVER_INTERVALS>;
/** A `failover_events` row. */
export type FailoverEventsRow = RowOf<typeof more.FAILOVER_EVENTS>;
/** A `node_stats` row. */
export type NodeStatsRow = RowOf<typeof more.NODE_STATS>;

/** The row type of each table, by table name. */
export type TableRows = { [K in TableName]: RowOf<(typeof TABLES)[K]> };
