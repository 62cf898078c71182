import assert from "node:assert/strict";
import { ingestPaths } from "../../../src/collect/mod.ts";
import { loadTable } from "../../../src/analyze/mod.ts";
import { thisWriter } from "../../../src/store/_claims.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const QUIET = ROOT + "test/testdata/corpus/redis-benchmark_7.0.15_redis-7.0.15_quiet.txt";
// the permissions of `deno task kvlab` (no --allow-all)
const PERMISSIONS =
  "--allow-read --allow-write --allow-env --allow-ffi --allow-sys --allow-run --allow-net=127.0.0.1"
    .split(" ");

/** Runs the CLI as a user of the tasks would, with `input` on its standard input. */
async function kvlab(args: string[], input?: Uint8Array, flags: string[] = []) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, ...flags, ROOT + "src/cli.ts", ...args],
    stdin: input ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (input) {
    const w = child.stdin.getWriter();
    await w.write(input);
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("ingest of a folder with no file is an error that names it", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-empty-" });
  Deno.mkdirSync(`${dir}/in`);
  Deno.writeTextFileSync(`${dir}/in/.hidden`, "SET: 1.00 requests per second\n");
  const out = await ingestPaths([`${dir}/in`], { data: `${dir}/data` });
  assert.deepEqual(out.map((o) => o.status), ["error"]);
  assert.match(out[0].error!.message, /^no files found under .*\/in \(hidden files/);
  const r = await kvlab(["ingest", `${dir}/in`, "--data", `${dir}/data`]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no files found under/);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("ingest follows symbolic links in folders, and a link cycle ends", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-links-" });
  Deno.mkdirSync(`${dir}/in/sub`, { recursive: true });
  Deno.symlinkSync(QUIET, `${dir}/in/linked.txt`);
  Deno.symlinkSync(`${dir}/in`, `${dir}/in/sub/loop`); // a cycle
  Deno.symlinkSync(`${dir}/nowhere.txt`, `${dir}/in/broken.txt`);
  const out = await ingestPaths([`${dir}/in`], { data: `${dir}/data` });
  const by = Object.fromEntries(out.map((o) => [o.path.slice(dir.length + 4), o]));
  assert.deepEqual(Object.keys(by).sort(), ["broken.txt", "linked.txt"]);
  assert.equal(by["linked.txt"].status, "ingested");
  assert.equal(by["broken.txt"].status, "error");
  assert.match(by["broken.txt"].error!.message, /broken symbolic link/);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("ingest refuses devices at once, with a message", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-dev-" });
  const t0 = performance.now();
  const out = await ingestPaths(["/dev/zero", "/dev/urandom"], { data: `${dir}/data` });
  assert.ok(performance.now() - t0 < 5000);
  assert.deepEqual(out.map((o) => o.status), ["error", "error"]);
  for (const o of out) {
    assert.match(o.error!.message, /not a regular file \(a character device\); kvlab ingest reads/);
  }
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("ingest reads standard input and pipes, once, as streams", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-stream-" });
  const bytes = Deno.readFileSync(QUIET);
  for (const name of ["-", "/dev/stdin"]) {
    await t.step(`${name} under the tasks' permissions`, async () => {
      const data = `${dir}/data-${name.replaceAll("/", "_")}`;
      const r = await kvlab(["ingest", name, "--data", data], bytes);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^ingested (stdin|\/dev\/stdin): 1 run \(1 complete\), 6 tests/);
      assert.equal(loadTable(data, "results").height, 6);
      assert.deepEqual([...Deno.readDirSync(`${data}/tmp`)], []);
    });
  }
  await t.step("a FIFO given by name (as <(cat out.txt) gives one)", async () => {
    const fifo = `${dir}/fifo`;
    assert.equal((await new Deno.Command("mkfifo", { args: [fifo] }).output()).code, 0);
    const writer = new Deno.Command("sh", { args: ["-c", `cat '${QUIET}' > '${fifo}'`] }).spawn();
    const out = await ingestPaths([fifo], { data: `${dir}/data-fifo` });
    await writer.status;
    assert.deepEqual(out.map((o) => [o.status, o.runs[0]?.tests]), [["ingested", 6]]);
    // a FIFO met inside a folder is not opened (it could wait for a writer forever)
    const inFolder = await ingestPaths([dir], { data: `${dir}/data-fifo` });
    const f = inFolder.find((o) => o.path === fifo)!;
    assert.match(f.error!.message, /a FIFO inside a folder is not read/);
  });
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("ingest refuses a file with a huge line, naming the line, in little memory", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-longline-" });
  const f = await Deno.open(`${dir}/long.txt`, { write: true, create: true });
  await f.write(new TextEncoder().encode("SET: 1.00 requests per second\nGET: "));
  const x = new Uint8Array(1 << 20).fill(0x41);
  for (let i = 0; i < 50; i++) await f.write(x); // 50 MB on line 2
  f.close();
  // in a heap of 160 MB (reading the line peaked at about 700 MB)
  const heap = ["--v8-flags=--max-old-space-size=160"];
  const r = await kvlab(["ingest", `${dir}/long.txt`, "--data", `${dir}/data`], undefined, heap);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /long\.txt:2: line 2 is more than 1 MiB with no line break/);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("ingest removes tmp/ leftovers of writers that are gone", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-tmp-" });
  const data = `${dir}/data`;
  // a process that has exited: its pid names no running process
  const gone = new Deno.Command("true").spawn();
  await gone.status;
  const dead = { ...thisWriter(), pid: gone.pid, start: 1 };
  Deno.mkdirSync(`${data}/tmp/20260101T000000Z-aaaaaaaaaaaa/raw-x`, { recursive: true });
  Deno.writeTextFileSync(
    `${data}/tmp/20260101T000000Z-aaaaaaaaaaaa.writer.json`,
    JSON.stringify(dead),
  );
  // a batch of a killed ingest named by its claim only
  Deno.mkdirSync(`${data}/tmp/20260101T000000Z-bbbbbbbbbbbb`, { recursive: true });
  Deno.mkdirSync(`${data}/sources/${"c".repeat(64)}`, { recursive: true });
  Deno.writeTextFileSync(
    `${data}/sources/${"c".repeat(64)}/any.json`,
    JSON.stringify({ state: "claimed", writer: dead, batch: "20260101T000000Z-bbbbbbbbbbbb" }),
  );
  // a live writer's entry stays
  Deno.mkdirSync(`${data}/tmp/live`);
  Deno.writeTextFileSync(`${data}/tmp/live.writer.json`, JSON.stringify(thisWriter()));
  const out = await ingestPaths([QUIET], { data });
  assert.equal(out[0].status, "ingested");
  assert.deepEqual([...Deno.readDirSync(`${data}/tmp`)].map((e) => e.name).sort(), [
    "live",
    "live.writer.json",
  ]);
  Deno.removeSync(dir, { recursive: true });
});
