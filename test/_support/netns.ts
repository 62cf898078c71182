/**
 * Test support for several client hosts (issue 35): a server network namespace and one namespace
 * per agent, each joined to the server's by its own veth pair, so every "host" has its own
 * address and loopback; the test process reaches the server's namespace by one more veth. The
 * server is reached by every host at one address (on the server namespace's loopback, routed
 * through each veth). Where namespaces cannot be made (not root, no `ip`), the same layout runs
 * on loopback and says so; under `CI=true` as root, failing to make them is an error. Every
 * namespace, veth and process made is removed, by name and by PID.
 *
 * @module
 */

/** Where the hosts of a test run. */
export interface Hosts {
  /** `netns` (real separate network stacks) or `loopback` (all on 127.0.0.1). */
  mode: "netns" | "loopback";
  /** Why not netns, when loopback. */
  note: string | null;
  /** The address every host reaches the servers at. */
  serverHost: string;
  /** The argv prefix that runs a program in the server's namespace (or nothing). */
  inServer: string[];
  /** The argv prefix that runs a program in agent k's namespace (0-based). */
  inAgent: (k: number) => string[];
  /** Starts a process (its PID kept, stopped by {@link Hosts.close}). */
  spawn: (argv: string[], o?: { log?: string }) => Deno.ChildProcess;
  /** Stops one process started by {@link Hosts.spawn}, by PID. */
  kill: (p: Deno.ChildProcess, signal?: Deno.Signal) => Promise<void>;
  /** Stops every process (by PID), then removes every namespace and veth made. */
  close: () => Promise<void>;
}

async function ip(args: string[]): Promise<void> {
  const out = await new Deno.Command("ip", { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`ip ${args.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
}

/**
 * Makes the hosts of a test: a server namespace and `agents` agent namespaces (or loopback).
 *
 * @param agents How many agent hosts.
 */
export async function makeHosts(agents: number): Promise<Hosts> {
  const tag = String(Deno.pid % 10_000);
  const net = `10.${200 + (Deno.pid % 50)}`;
  const made: string[] = [];
  const links: string[] = [];
  const procs: Deno.ChildProcess[] = [];
  const spawn = (argv: string[], o: { log?: string } = {}) => {
    const p = new Deno.Command(argv[0], {
      args: argv.slice(1),
      stdin: "null",
      stdout: o.log ? "piped" : "null",
      stderr: o.log ? "piped" : "null",
    }).spawn();
    if (o.log) {
      const file = Deno.openSync(o.log, { write: true, create: true, append: true });
      const w = (s: ReadableStream<Uint8Array>) =>
        s.pipeTo(
          new WritableStream({ write: (c) => void file.writeSync(c) }),
        ).catch(() => {});
      Promise.all([w(p.stdout), w(p.stderr)]).finally(() => file.close());
    }
    procs.push(p);
    return p;
  };
  const kill = async (p: Deno.ChildProcess, signal: Deno.Signal = "SIGTERM") => {
    try {
      p.kill(signal);
    } catch { /* gone */ }
    const t = setTimeout(() => {
      try {
        p.kill("SIGKILL");
      } catch { /* gone */ }
    }, 10_000);
    await p.status;
    clearTimeout(t);
  };
  const close = async () => {
    for (const p of procs) await kill(p);
    for (const l of links) await ip(["link", "del", l]).catch(() => {});
    for (const ns of made.reverse()) await ip(["netns", "del", ns]).catch(() => {});
  };
  const server = `k35s${tag}`;
  try {
    if (Deno.uid() !== 0) throw new Error("not root");
    await ip(["netns", "add", server]);
    made.push(server);
    await ip(["-n", server, "link", "set", "lo", "up"]);
    await ip(["-n", server, "addr", "add", `${net}.255.1/32`, "dev", "lo"]);
    // the test process's own link to the server namespace
    const root = `k35r${tag}`;
    await ip(["link", "add", root, "type", "veth", "peer", "name", "k35x", "netns", server]);
    links.push(root);
    await ip(["addr", "add", `${net}.0.1/24`, "dev", root]);
    await ip(["link", "set", root, "up"]);
    await ip(["-n", server, "addr", "add", `${net}.0.2/24`, "dev", "k35x"]);
    await ip(["-n", server, "link", "set", "k35x", "up"]);
    await ip(["route", "add", `${net}.255.1/32`, "via", `${net}.0.2`]);
    for (let k = 1; k <= agents; k++) {
      const ns = `k35a${k}n${tag}`;
      await ip(["netns", "add", ns]);
      made.push(ns);
      await ip(["-n", ns, "link", "set", "lo", "up"]);
      await ip([
        "-n",
        server,
        "link",
        "add",
        `k35s${k}`,
        "type",
        "veth",
        "peer",
        "name",
        "eth0",
        "netns",
        ns,
      ]);
      await ip(["-n", server, "addr", "add", `${net}.${k}.1/24`, "dev", `k35s${k}`]);
      await ip(["-n", server, "link", "set", `k35s${k}`, "up"]);
      await ip(["-n", ns, "addr", "add", `${net}.${k}.2/24`, "dev", "eth0"]);
      await ip(["-n", ns, "link", "set", "eth0", "up"]);
      await ip(["-n", ns, "route", "add", `${net}.255.1/32`, "via", `${net}.${k}.1`]);
      // replies to the test process (10.x.0.1) go back through the server namespace
      await ip(["-n", ns, "route", "add", `${net}.0.0/24`, "via", `${net}.${k}.1`]);
    }
    await Deno.writeTextFile(`/proc/sys/net/ipv4/ip_forward`, "1").catch(() => {});
    await new Deno.Command("ip", {
      args: ["netns", "exec", server, "sysctl", "-qw", "net.ipv4.ip_forward=1"],
    }).output();
    return {
      mode: "netns",
      note: null,
      serverHost: `${net}.255.1`,
      inServer: ["ip", "netns", "exec", server],
      inAgent: (k) => ["ip", "netns", "exec", `k35a${k + 1}n${tag}`],
      spawn,
      kill,
      close,
    };
  } catch (e) {
    await close();
    if (Deno.env.get("CI") === "true" && Deno.uid() === 0) throw e;
    return {
      mode: "loopback",
      note: `network namespaces could not be made (${(e as Error).message}): on loopback`,
      serverHost: "127.0.0.1",
      inServer: [],
      inAgent: () => [],
      spawn,
      kill,
      close,
    };
  }
}

/**
 * Runs `redis-cli` against a server of the test from the server's namespace (a process: the
 * test itself may connect to loopback only), `--raw`.
 *
 * @returns Its stdout, or null when it failed.
 */
export async function redisCli(
  hosts: Pick<Hosts, "inServer" | "serverHost">,
  port: number,
  args: string[],
): Promise<string | null> {
  const argv = [
    ...hosts.inServer,
    "redis-cli",
    "-h",
    hosts.serverHost,
    "-p",
    String(port),
    "--raw",
    ...args,
  ];
  const out = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    stdout: "piped",
    stderr: "null",
  })
    .output();
  const text = new TextDecoder().decode(out.stdout);
  return out.success && !/^(ERR|Could not connect)/m.test(text) ? text : null;
}

/** Waits (bounded: 100 tries, 100 ms apart) until a server answers PING. */
export async function waitForServer(
  hosts: Pick<Hosts, "inServer" | "serverHost">,
  port: number,
): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await redisCli(hosts, port, ["PING"]))?.trim() === "PONG") return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`no server at ${hosts.serverHost}:${port}`);
}

/** A port free on loopback now (for a server of this test, in its namespace or on loopback). */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
