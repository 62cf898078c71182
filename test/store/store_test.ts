import assert from "node:assert/strict";
import {
  claimDir,
  claimKey,
  claimPath,
  claimSource,
  completeClaim,
  otherClaims,
  releaseClaim,
  type SourceClaim,
} from "../../src/collect/mod.ts";

const SHA = "ab".repeat(32);
const NOW = new Date("2026-11-30T00:00:00Z");

Deno.test("claimKey() names the bytes and a digest of the labels", () => {
  const k = claimKey(SHA, { server: "redis", label: null });
  assert.equal(k.sha256, SHA);
  assert.match(k.labels!, /^[0-9a-f]{12}$/);
  // the digest is of the labels' JSON, so key order and values both count
  assert.equal(claimKey(SHA, { server: "redis", label: null }).labels, k.labels);
  assert.notEqual(claimKey(SHA, { label: null, server: "redis" }).labels, k.labels);
  assert.notEqual(claimKey(SHA, { server: "valkey", label: null }).labels, k.labels);
  assert.throws(() => claimKey("ab", null), TypeError);
  assert.throws(() => claimKey(SHA.toUpperCase(), null), TypeError);
});

Deno.test("claims live in sources/<sha256>/<labels>.json", async (t) => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-claims-" });
  const redis = claimKey(SHA, { server: "redis" });
  const valkey = claimKey(SHA, { server: "valkey" });

  await t.step("the layout", () => {
    assert.equal(claimDir(data, redis), `${data}/sources/${SHA}`);
    assert.equal(claimPath(data, redis), `${data}/sources/${SHA}/${redis.labels}.json`);
    assert.equal(claimPath(data, claimKey(SHA, null)), `${data}/sources/${SHA}/any.json`);
  });

  await t.step("claimSource() lets exactly one writer win a key", async () => {
    const wins = await Promise.all(
      Array.from(
        { length: 5 },
        (_, i) => claimSource(data, redis, { sourcePath: `/in/${i}.txt`, now: NOW }),
      ),
    );
    assert.equal(wins.filter((w) => w.claimed).length, 1);
    const again = await claimSource(data, redis, { sourcePath: "/in/again.txt", now: NOW });
    assert.equal(again.claimed, false);
    assert.equal(!again.claimed && again.existing.state, "claimed");
    const onDisk: SourceClaim = JSON.parse(Deno.readTextFileSync(claimPath(data, redis)));
    assert.equal(onDisk.sha256, `${SHA}-${redis.labels}`);
  });

  await t.step("completeClaim() records the runs; otherClaims() lists other labels", async () => {
    const others = otherClaims(data, valkey);
    assert.equal(others.length, 1);
    assert.match(others[0].path, /^\/in\/\d\.txt$/);
    assert.deepEqual(others[0].runIds, []);
    await completeClaim(data, redis, { sourcePath: "/in/0.txt", runIds: ["r1", "r2"], now: NOW });
    const done = await claimSource(data, redis, { sourcePath: "/in/0.txt", now: NOW });
    assert.deepEqual(!done.claimed && [done.existing.state, done.existing.run_ids], [
      "done",
      ["r1", "r2"],
    ]);
    assert.equal(
      (await claimSource(data, valkey, { sourcePath: "/in/v.txt", now: NOW })).claimed,
      true,
    );
    assert.deepEqual(otherClaims(data, valkey), [{ path: "/in/0.txt", runIds: ["r1", "r2"] }]);
    assert.deepEqual(otherClaims(data, claimKey("cd".repeat(32), null)), []);
  });

  await t.step("releaseClaim() drops the claim, and the folder with the last one", async () => {
    await releaseClaim(data, valkey);
    assert.deepEqual(otherClaims(data, valkey), [{ path: "/in/0.txt", runIds: ["r1", "r2"] }]);
    assert.equal(
      (await claimSource(data, valkey, { sourcePath: "/in/v.txt", now: NOW })).claimed,
      true,
    );
    await releaseClaim(data, valkey);
    await releaseClaim(data, redis);
    assert.deepEqual([...Deno.readDirSync(`${data}/sources`)], []);
  });

  await t.step("a malformed key is refused", async () => {
    await assert.rejects(
      () =>
        claimSource(data, { sha256: SHA, labels: "../x" }, { sourcePath: "/in/x.txt", now: NOW }),
      TypeError,
    );
  });
  Deno.removeSync(data, { recursive: true });
});
