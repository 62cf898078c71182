/**
 * Against a real redis-server with a TLS port whose certificate a throwaway CA signed: every
 * tool runs given the CA (redis-benchmark --cacert, memtier --cacert, kvlab load over Deno's
 * TLS), and a wrong CA fails at once, naming TLS. (Debian's redis-server 7.0.15 here; Valkey with
 * TLS is in test/collect/tls/.)
 */

import assert from "node:assert/strict";
import { cli, withTlsServer } from "../../_support/cluster.ts";
import { walk } from "../../_support/servers.ts";
import { withTempDir } from "../../_support/temp.ts";
import { toolOrSkip } from "../../_support/tools.ts";
import {
  DenoProcessRunner,
  parseServerUrl,
  runMemtier,
  runOpenLoopStep,
  runRedisBenchmark,
  type ServerTarget,
  withTargetOptions,
} from "../../../src/collect/mod.ts";

Deno.test("TLS with a private CA: redis-benchmark, memtier, kvlab load; a wrong CA fails naming TLS", async (t) => {
  await withTlsServer((s) =>
    withTempDir("kvlab-tls-data-", async (dir) => {
      const target = (caFile: string): ServerTarget => ({
        ...parseServerUrl(s.url),
        tlsFiles: { caFile },
      });
      await t.step("redis-benchmark --tls --cacert", async () => {
        const r = await runRedisBenchmark({
          data: `${dir}/rb`,
          runner: new DenoProcessRunner(),
          params: { target: target(s.ca.caFile), tests: ["get"], requests: 2000, clients: 4 },
        });
        assert.equal(r.status, "complete", r.reason ?? "");
        assert.match(r.command, /--tls .*--cacert /);
      });
      await t.step("memtier --tls --cacert", async () => {
        const memtier = toolOrSkip("memtier_benchmark", "memtier over TLS");
        if (!memtier) return;
        const r = await runMemtier({
          tool: memtier,
          target: target(s.ca.caFile),
          threads: 1,
          clients: 2,
          ratio: "1:1",
          keyMaximum: 100,
          requests: 300,
        }, { data: `${dir}/mt`, runner: new DenoProcessRunner() });
        assert.equal(r.status, "complete", r.reason ?? "");
        assert.match(r.command, /--tls --cacert=/);
      });
      await t.step("kvlab load over TLS: the Deno engine runs, saying why", async () => {
        const run = await runOpenLoopStep(
          { target: target(s.ca.caFile), requestedOpsPerSec: 500, connections: 2, durationS: 1 },
          { data: `${dir}/load` },
        );
        assert.equal(run.status, "complete", run.reason ?? "");
        assert.equal(run.engine, "deno");
        assert.match(run.engineNote ?? "", /TLS/);
        assert.equal(run.results[0].error_count ?? 0, 0);
      });
      await t.step(
        "password_env: the password from the environment, in no stored file",
        async () => {
          const password = "pw-from-the-env-4711";
          await cli(s.server.port, "config", "set", "requirepass", password);
          Deno.env.set("KVLAB_TLS_TEST_PW", password);
          try {
            const withPw = withTargetOptions(parseServerUrl(s.url), {
              tls: { caFile: s.ca.caFile },
              passwordEnv: "KVLAB_TLS_TEST_PW",
            });
            const rb = await runRedisBenchmark({
              data: `${dir}/pw`,
              runner: new DenoProcessRunner(),
              params: { target: withPw, tests: ["get"], requests: 500, clients: 2 },
            });
            assert.equal(rb.status, "complete", rb.reason ?? "");
            const load = await runOpenLoopStep(
              { target: withPw, requestedOpsPerSec: 200, connections: 1, durationS: 1 },
              { data: `${dir}/pw` },
            );
            assert.equal(load.status, "complete", load.reason ?? "");
            for (const f of walk(`${dir}/pw`)) {
              assert.ok(!new TextDecoder().decode(Deno.readFileSync(f)).includes(password), f);
            }
          } finally {
            Deno.env.delete("KVLAB_TLS_TEST_PW");
            await cli(
              s.server.port,
              "-a",
              password,
              "--no-auth-warning",
              "config",
              "set",
              "requirepass",
              "",
            );
          }
        },
      );
      await t.step("a wrong CA fails naming TLS, without starting the tool", async () => {
        const rb = await runRedisBenchmark({
          data: `${dir}/wrong`,
          runner: new DenoProcessRunner(),
          // (a hang would end at this limit with a reason naming the timeout, not TLS)
          timeoutMs: 60_000,
          params: { target: target(s.otherCa.caFile), tests: ["get"], requests: 1000 },
        });
        assert.equal(rb.status, "failed");
        assert.match(
          rb.reason ?? "",
          /^TLS handshake with rediss:\/\/127\.0\.0\.1:\d+ failed: .*other-ca\.crt/,
        );
        const load = await runOpenLoopStep(
          {
            target: target(s.otherCa.caFile),
            requestedOpsPerSec: 100,
            connections: 1,
            durationS: 1,
          },
          { data: `${dir}/wrong` },
        );
        assert.equal(load.status, "failed");
        assert.match(load.reason ?? "", /TLS handshake/);
      });
    })
  );
});
