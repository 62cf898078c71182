/**
 * The tables of a run's other parties, listed here (with the shape of `schema.ts`'s, which adds
 * them to `TABLES`) to keep `schema.ts` within its size: `agent_steps` (schema 1.6, issue 35),
 * one row per client host of a step run from several (`kvlab run` with `agents:`), beside the one
 * merged run of the step; `container_stats` (1.7, issue 34), a server's container over a run;
 * `failover_intervals` and `failover_events` (1.8, issue 33), a failover run's 100 ms timeline and
 * what kvlab did and saw; `node_stats` (1.9, issue 33), each node of a cluster or
 * replicated topology over a run.
 *
 * @module
 */

/** `agent_steps` (1.6): the agents of a step run from several client hosts. */
export const AGENT_STEPS = [
  { name: "run_id", type: "string", nullable: false, doc: "The merged run of the step." },
  {
    name: "agent",
    type: "string",
    nullable: false,
    doc: "The agent's name (`kvlab agent --name`).",
  },
  { name: "host", type: "string", nullable: true, doc: "The agent's host name, as it registered." },
  {
    name: "share_index",
    type: "int",
    nullable: false,
    doc: "Its connections: i % share_of = share_index.",
  },
  { name: "share_of", type: "int", nullable: false, doc: "Agents sharing the step." },
  { name: "status", type: "string", nullable: false, doc: "ok, error, refused or no-answer." },
  {
    name: "error",
    type: "string",
    nullable: true,
    doc: "What the agent (or the coordinator) saw, when not ok.",
  },
  {
    name: "clock_offset_ms",
    type: "float",
    nullable: true,
    doc: "Control clock − agent clock (TIME round trips), ms.",
  },
  {
    name: "clock_uncertainty_ms",
    type: "float",
    nullable: true,
    doc: "Half the best TIME round trip: the offset is within ± this, ms.",
  },
  {
    name: "start_skew_ms",
    type: "float",
    nullable: true,
    doc: "Its schedule's start − the common start (control clock), ms.",
  },
  {
    name: "start_skew_warning",
    type: "bool",
    nullable: true,
    doc: "Skew above max(5 ms, clock_uncertainty_ms).",
  },
  { name: "connections", type: "int", nullable: true, doc: "Connections it ran." },
  {
    name: "requested_ops_per_sec",
    type: "float",
    nullable: true,
    doc: "Its share of the requested rate.",
  },
  {
    name: "ops_per_sec",
    type: "float",
    nullable: true,
    doc: "Its achieved rate (replies in its window / window).",
  },
  {
    name: "error_count",
    type: "int",
    nullable: true,
    doc: "Error replies, lost and unanswered requests.",
  },
  { name: "client_cpu_s", type: "float", nullable: true, doc: "CPU time its generator used." },
  {
    name: "send_lateness_p99_ms",
    type: "float",
    nullable: true,
    doc: "p99 of its generator's own send lateness.",
  },
  {
    name: "noise_other_cpu_pct",
    type: "float",
    nullable: true,
    doc: "Other processes' CPU on its host during its step, %.",
  },
  {
    name: "noise_steal_pct",
    type: "float",
    nullable: true,
    doc: "Steal time on its host during its step, %.",
  },
  {
    name: "noise_disturbance",
    type: "string",
    nullable: true,
    doc: "Why its host was not quiet, or null.",
  },
  {
    name: "raw_file",
    type: "string",
    nullable: true,
    doc: "Its raw file in the run (its result with HDR histograms).",
  },
] as const;

/** `container_stats` (1.7): a server's container over a run, one `docker stats` sample a second. */
export const CONTAINER_STATS = [
  { name: "run_id", type: "string", nullable: false, doc: "The run." },
  { name: "sample", type: "int", nullable: false, doc: "0-based sample of the run." },
  {
    name: "elapsed_s",
    type: "float",
    nullable: false,
    doc: "Seconds since the run started, when docker printed the sample.",
  },
  { name: "container_name", type: "string", nullable: false, doc: "The container." },
  {
    name: "cpu_pct",
    type: "float",
    nullable: true,
    doc: "CPU %, as docker stats prints it (100 = one CPU); see SCHEMA.md.",
  },
  {
    name: "memory_bytes",
    type: "int",
    nullable: true,
    doc: "MEM USAGE (the cgroup's usage less inactive file pages).",
  },
  {
    name: "memory_limit_bytes",
    type: "int",
    nullable: true,
    doc: "LIMIT: the container's memory limit, else the host's.",
  },
  {
    name: "pids",
    type: "int",
    nullable: true,
    doc: "PIDS: processes and threads in the container.",
  },
  {
    name: "source_line",
    type: "int",
    nullable: false,
    doc: "Line of the run's raw `docker-stats.jsonl`.",
  },
] as const;

/** `failover_intervals` (1.8): a failover run's timeline, one row per 100 ms interval. */
export const FAILOVER_INTERVALS = [
  { name: "run_id", type: "string", nullable: false, doc: "The failover run." },
  {
    name: "interval",
    type: "int",
    nullable: false,
    doc: "0-based interval of the run's schedule.",
  },
  {
    name: "start_ms",
    type: "float",
    nullable: false,
    doc: "Its start, ms since the schedule started.",
  },
  { name: "width_ms", type: "float", nullable: false, doc: "Its width, ms (100)." },
  { name: "requested_ops_per_sec", type: "float", nullable: false, doc: "The run's fixed rate." },
  { name: "sent", type: "int", nullable: false, doc: "Requests written in it." },
  { name: "completed", type: "int", nullable: false, doc: "Non-error replies received in it." },
  { name: "achieved_ops_per_sec", type: "float", nullable: false, doc: "completed / width." },
  {
    name: "errors",
    type: "int",
    nullable: false,
    doc: "Errors in it: the sum of the six kinds below.",
  },
  { name: "refused", type: "int", nullable: false, doc: "Requests whose connection was refused." },
  {
    name: "reset",
    type: "int",
    nullable: false,
    doc: "Requests lost to a connection reset or closed.",
  },
  {
    name: "timeout",
    type: "int",
    nullable: false,
    doc: "Requests without a reply within the request timeout.",
  },
  { name: "clusterdown", type: "int", nullable: false, doc: "CLUSTERDOWN replies." },
  { name: "readonly", type: "int", nullable: false, doc: "READONLY replies." },
  { name: "other", type: "int", nullable: false, doc: "Other errors." },
  { name: "moved", type: "int", nullable: false, doc: "MOVED redirections followed (not errors)." },
  {
    name: "asked",
    type: "int",
    nullable: true,
    doc: "ASK redirections followed (not errors; 1.10).",
  },
  {
    name: "p50_latency_ms",
    type: "float",
    nullable: true,
    doc: "Median latency from the intended send of its replies.",
  },
  {
    name: "p99_latency_ms",
    type: "float",
    nullable: true,
    doc: "p99 latency from the intended send of its replies.",
  },
  {
    name: "max_latency_ms",
    type: "float",
    nullable: true,
    doc: "Largest latency from the intended send of its replies.",
  },
] as const;

/** `failover_events` (1.8): what kvlab did in a failover run and which node took over. */
export const FAILOVER_EVENTS = [
  { name: "run_id", type: "string", nullable: false, doc: "The failover run." },
  { name: "event", type: "string", nullable: false, doc: "action, action_done or took_over." },
  {
    name: "elapsed_ms",
    type: "float",
    nullable: true,
    doc: "When, ms since the schedule started; null when read after the run.",
  },
  {
    name: "action",
    type: "string",
    nullable: false,
    doc: "kill, stop, cluster-failover or reshard.",
  },
  {
    name: "node",
    type: "string",
    nullable: true,
    doc: "The node (`node 2`), as kvlab started it.",
  },
  { name: "address", type: "string", nullable: true, doc: "Its host:port." },
  { name: "pid", type: "int", nullable: true, doc: "Its process id." },
  { name: "detail", type: "string", nullable: true, doc: "What kvlab did or read, in words." },
] as const;

/** `node_stats` (1.9): each node of a cluster or replicated topology over a run. */
export const NODE_STATS = [
  { name: "run_id", type: "string", nullable: false, doc: "The run." },
  { name: "node", type: "string", nullable: false, doc: "The node, `host:port`." },
  {
    name: "role",
    type: "string",
    nullable: false,
    doc: "`master`, `replica`, or `unknown` (no INFO).",
  },
  {
    name: "primary",
    type: "string",
    nullable: true,
    doc: "Its master's `host:port` (its own for a master).",
  },
  { name: "elapsed_s", type: "float", nullable: false, doc: "Seconds between the two reads." },
  { name: "cpu_sys_s", type: "float", nullable: true, doc: "Delta of INFO `used_cpu_sys`." },
  { name: "cpu_user_s", type: "float", nullable: true, doc: "Delta of INFO `used_cpu_user`." },
  {
    name: "commands",
    type: "int",
    nullable: true,
    doc:
      "Commands executed over the run (commandstats calls but connection setup, REPLCONF, CLUSTER, ASKING, CONFIG).",
  },
  { name: "keys", type: "int", nullable: true, doc: "Keys as the run ended (INFO keyspace)." },
] as const;
