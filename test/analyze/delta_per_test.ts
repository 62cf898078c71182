/**
 * `delta(…, { per })` on simulated TLS studies (seeded): Redis and Valkey each with plaintext
 * and TLS runs. A/A (TLS costs nothing) is called better or worse at most as often as the
 * nominal 5 % (plus sampling slack) per server; a cost that only one server has is found in its
 * rows and not in the other's, which pooling both servers would blur.
 */
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { seededRandom } from "../../src/random.ts";
import { delta } from "../../src/analyze/compare/delta.ts";

/** A seeded standard normal (Box–Muller). */
function normal(seed: number): () => number {
  const u = seededRandom(seed);
  return () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

/**
 * `cells` tests × 2 servers × 2 transports × `n` runs (CV 5 %); TLS's throughput is the
 * plaintext one times `tlsFactor[server]`.
 */
function study(seed: number, cells: number, n: number, tlsFactor: Record<string, number>) {
  const z = normal(seed);
  const rows: { test: string; server: string; transport: string; ops_per_sec: number }[] = [];
  for (let i = 0; i < cells; i++) {
    for (const server of ["redis", "valkey"]) {
      for (const transport of ["tcp", "tls"]) {
        const mean = 100_000 * (transport === "tls" ? tlsFactor[server] : 1);
        for (let r = 0; r < n; r++) {
          rows.push({ test: `T${i}`, server, transport, ops_per_sec: mean * (1 + 0.05 * z()) });
        }
      }
    }
  }
  return pl.DataFrame(rows);
}

const called = (verdicts: unknown[]) =>
  verdicts.filter((v) => v === "better" || v === "worse").length / verdicts.length;

Deno.test("delta per server: A/A stays at or below 5 % called; one server's cost stays its own", () => {
  const cells = 200;
  const slack = 3 * Math.sqrt(0.05 * 0.95 / cells);
  const opts = { dimension: "transport", from: "tcp", to: "tls", per: ["server"] };
  const aa = delta(study(7, cells, 5, { redis: 1, valkey: 1 }), opts);
  assert.equal(aa.height, 2 * cells);
  for (const server of ["redis", "valkey"]) {
    const rows = aa.filter(pl.col("server").eq(pl.lit(server)));
    const rate = called(rows.getColumn("throughput_verdict").toArray());
    assert.ok(rate <= 0.05 + slack, `${server}: ${(rate * 100).toFixed(1)} % called in A/A`);
    // every row has its interval (5 runs per arm)
    assert.equal(rows.getColumn("throughput_factor_ci_low").nullCount(), 0);
  }
  // Valkey pays 30 %, Redis nothing: Valkey's rows say worse, Redis's stay near A/A
  const ab = delta(study(8, cells, 5, { redis: 1, valkey: 0.7 }), opts);
  const verdicts = (server: string) =>
    ab.filter(pl.col("server").eq(pl.lit(server))).getColumn("throughput_verdict").toArray();
  const worse = verdicts("valkey").filter((v) => v === "worse").length / cells;
  assert.ok(worse >= 0.9, `valkey: ${(worse * 100).toFixed(1)} % worse`);
  assert.ok(called(verdicts("redis")) <= 0.05 + slack);
  // without per, both servers' runs are pooled in one row per test (what per keeps apart)
  const pooled = delta(study(8, 3, 5, { redis: 1, valkey: 0.7 }), {
    dimension: "transport",
    from: "tcp",
    to: "tls",
  });
  assert.deepEqual([pooled.height, pooled.getColumn("from_n").get(0)], [3, 10]);
});

Deno.test("delta per: a column not in the data, or the dimension itself, is an error", () => {
  const df = study(9, 1, 2, { redis: 1, valkey: 1 });
  const o = { dimension: "transport", from: "tcp", to: "tls" };
  assert.throws(() => delta(df, { ...o, per: ["nope"] }), /invalid column: nope \(--per: not in/);
  assert.throws(() => delta(df, { ...o, per: ["transport"] }), /--per: it is the dimension/);
});
