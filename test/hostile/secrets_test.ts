/**
 * Hostile inputs, secrets (issue 11, D1–D6): each fixture under `test/testdata/hostile/` holds
 * secrets in one position; the real CLI ingests it (or checks a plan with `--dry-run`), and no
 * byte written under `--data` and nothing printed (stdout, stderr, every table) may hold them.
 */

import assert from "node:assert/strict";
import { TABLES } from "../../src/schema.ts";
import { Dataset } from "../../src/store/dataset.ts";
import { allBytes, HOSTILE, kvlab, leaked } from "./_cli.ts";

/** Each fixture and the secrets in it. */
const FIXTURES: Record<string, string[]> = {
  // D2: a pasted interactive redis-cli session
  "cli-session-redis-cli-7.0.15.txt": [
    "SessAuthPw01",
    "SessAuthPw02",
    "SessCfgPw03",
    "SessHelloPw04",
    "SessAclPw05",
    "SessAclPw06",
  ],
  // D3: secrets on \-continued lines, a value on the line after its flag
  "continued-redis-benchmark-7.0.15.txt": ["ContSecret52", "ContSecret53", "ContUser54"],
  // D4: INFO with masterauth / requirepass (raw copy and server_info table)
  "info-requirepass-redis-7.0.15.txt": ["InfoMasterPw07", "InfoReqPw08"],
  // D5: ACL SETUSER with a quoted '>pw' (runs.command, run.json, raw)
  "acl-setuser-redis-cli-7.0.15.txt": ["AclCmdPw09"],
  // D6: the unknown-format error must not echo a secret first line
  "unknown-first-line-auth.txt": ["FirstLinePw10"],
  // a script(1)-style [COMMAND="…"] anywhere in a line
  "banner-mid-line-redis-benchmark-7.0.15.txt": ["BannerPw11"],
  // UTF-16 output with a BOM: decoded, ingested, and redacted like UTF-8
  "utf16le-redis-benchmark-7.0.15.txt": ["Utf16Pw12"],
  "utf16be-redis-benchmark-7.0.15.txt": ["Utf16Pw13"],
  // issue 21: memtier writes the password into its JSON (`"authenticate": "user:pw"`), also
  // unescaped (a password holding `"`)
  "memtier-2.3.0_authenticate.json": ["JsonAuthPw21"],
  "memtier-2.3.0_authenticate-unescaped.json": ["Quo", "tePw22"],
  // issue 21: the glued getopt form `-aPW` for memtier, redis-benchmark, valkey-benchmark,
  // redis-cli (runs.command and the raw copy)
  "glued-short-options-7.0.15.txt": ["GluedPw23", "GluedPw24", "GluedPw25", "GluedPw26"],
  // getopt's other forms memtier reads: `-Ra PW` (flags bundled before `-a`, the value the next
  // word, also on a \-continued line) and `--auth=PW` / `--authen PW` (a long option's prefix)
  "bundled-options-memtier-2.3.0.txt": ["BundledPw27", "AbbrevPw28", "AbbrevPw29", "BundledPw30"],
};

Deno.test("hostile: no secret of an ingested file is written or printed", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-" });
  const data = `${dir}/data`;
  const files = Object.keys(FIXTURES);
  const ingest = await kvlab(["ingest", ...files.map((f) => HOSTILE + f), "--data", data]);
  // every table, as a user would print it
  const tables: string[] = [];
  for (const name of Object.keys(TABLES)) {
    tables.push((await kvlab(["table", name, "--data", data, "--format", "json"])).printed);
  }
  const written = allBytes(data);
  const printed = ingest.printed + tables.join("\n");
  const check = (file: string) => {
    const secrets = FIXTURES[file];
    // the fixture really holds its secrets (UTF-16 ones as UTF-16)
    const raw = Deno.readFileSync(HOSTILE + file);
    const asText = new TextDecoder(
      raw[0] === 0xfe ? "utf-16be" : raw[0] === 0xff ? "utf-16le" : "utf-8",
    )
      .decode(raw);
    for (const s of secrets) assert.ok(asText.includes(s), `${file} holds ${s}`);
    assert.deepEqual(leaked(written.text, secrets), [], `${file}: written under --data`);
    assert.deepEqual(leaked(printed, secrets), [], `${file}: printed`);
  };
  const ingested = (file: string, summary: RegExp) =>
    assert.match(ingest.stdout, new RegExp(`ingested \\S*${file}: ${summary.source}`));

  await t.step("D2: an interactive redis-cli session (AUTH, CONFIG SET, HELLO, ACL)", () => {
    ingested("cli-session-redis-cli-7.0.15.txt", /1 run \(1 complete\), 2 tests/);
    check("cli-session-redis-cli-7.0.15.txt");
  });
  await t.step("D3: \\-continued command lines keep their \\ and lose their secrets", () => {
    const file = "continued-redis-benchmark-7.0.15.txt";
    ingested(file, /1 run \(1 complete\), 2 tests/);
    check(file);
    const run = Dataset.open(data).runFacts(["run_id", "source_path"])
      .find((r) => String(r.source_path).endsWith(file));
    assert.ok(run, "a run of the file");
    const copy = Dataset.open(data).runRaw(String(run.run_id)).find((r) => r.name === file);
    assert.ok(copy, "a raw copy");
    const lines = new TextDecoder().decode(copy.bytes).split("\n");
    assert.equal(lines[0], "$ redis-benchmark -h 127.0.0.1 -p 6379 \\");
    assert.equal(lines[1], "  -a *** \\");
    assert.equal(lines[2], "  --pass *** --user \\");
    assert.equal(lines[3], "  *** -t set,get -q");
  });
  await t.step("D4: INFO masterauth / requirepass, raw copy and server_info table", () => {
    ingested("info-requirepass-redis-7.0.15.txt", /1 run \(1 complete\)/);
    check("info-requirepass-redis-7.0.15.txt");
  });
  await t.step("D5: redis-cli ACL SETUSER bob on '>pw' in runs.command, run.json, raw", () => {
    ingested("acl-setuser-redis-cli-7.0.15.txt", /2 runs/);
    check("acl-setuser-redis-cli-7.0.15.txt");
  });
  await t.step("D6: the unknown-format error does not echo a secret first line", () => {
    assert.match(ingest.stdout + ingest.stderr, /unknown-first-line-auth\.txt:1:1: expected/);
    check("unknown-first-line-auth.txt");
  });
  await t.step('[COMMAND="…"] anywhere in a line', () => {
    ingested("banner-mid-line-redis-benchmark-7.0.15.txt", /1 run/);
    check("banner-mid-line-redis-benchmark-7.0.15.txt");
  });
  await t.step("UTF-16 LE and BE output (with a BOM) is decoded, not refused as binary", () => {
    ingested("utf16le-redis-benchmark-7.0.15.txt", /1 run \(1 complete\), 2 tests/);
    ingested("utf16be-redis-benchmark-7.0.15.txt", /1 run \(1 complete\), 2 tests/);
    check("utf16le-redis-benchmark-7.0.15.txt");
    check("utf16be-redis-benchmark-7.0.15.txt");
  });
  await t.step("memtier JSON `authenticate` is redacted in the raw copy, also unescaped", () => {
    ingested("memtier-2.3.0_authenticate.json", /1 run \(1 complete\)/);
    check("memtier-2.3.0_authenticate.json");
    check("memtier-2.3.0_authenticate-unescaped.json");
    assert.match(written.text, /"authenticate": "\*\*\*"/);
  });
  await t.step("glued short options (-aPW) of every tool, in runs.command and raw", () => {
    const file = "glued-short-options-7.0.15.txt";
    ingested(file, /4 runs/);
    check(file);
    const commands = Dataset.open(data).runFacts(["run_id", "command", "source_path"])
      .filter((r) => String(r.source_path).endsWith(file)).map((r) => String(r.command));
    assert.ok(commands.some((c) => c.includes("memtier_benchmark") && c.includes("-a***")));
    assert.ok(commands.some((c) => c.includes("redis-benchmark") && c.includes("-a***")));
  });
  await t.step("bundled (-Ra PW) and abbreviated (--auth=PW) options of memtier", () => {
    const file = "bundled-options-memtier-2.3.0.txt";
    ingested(file, /4 runs \(4 complete\)/);
    check(file);
    const commands = Dataset.open(data).runFacts(["run_id", "command", "source_path"])
      .filter((r) => String(r.source_path).endsWith(file)).map((r) => String(r.command));
    assert.deepEqual(commands.map((c) => c.split(" ").slice(5, 7).join(" ")).sort(), [
      "--auth=*** --test-time=3",
      "--authen ***",
      "-DRa ***",
      "-Ra ***",
    ]);
  });
  Deno.removeSync(dir, { recursive: true });
});

/** Plans whose server URL holds a password in a shape that broke redaction (D1). */
const URL_CASES: { url: string; secrets: string[]; error: RegExp }[] = [
  // the password holds @ : / # % and redaction used to stop at the first @
  { url: "redis://:p@ss:w/rd#%@127.0.0.1:7412", secrets: ["ss:w/rd"], error: /invalid server URL/ },
  // a malformed percent-escape
  {
    url: "redis://u:p%zzsecretXYZ@127.0.0.1:7412",
    secrets: ["secretXYZ"],
    error: /malformed percent-escape/,
  },
  // a bad port after credentials
  { url: "redis://u:PortPw15@127.0.0.1:99999", secrets: ["PortPw15"], error: /port 99999/ },
  { url: "redis://u:PortPw16@127.0.0.1:0", secrets: ["PortPw16"], error: /port 0/ },
  { url: "redis://u:PortPw17@127.0.0.1:6x", secrets: ["PortPw17"], error: /invalid server URL/ },
];

Deno.test("hostile: D1 plan and sample URL errors never print the password", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-url-" });
  for (const [i, c] of URL_CASES.entries()) {
    await t.step(`plan url ${JSON.stringify(c.url)}`, async () => {
      const plan = `${dir}/p${i}.yaml`;
      Deno.writeTextFileSync(
        plan,
        `name: p\nservers:\n  - name: a\n    url: ${JSON.stringify(c.url)}\ntests: [set]\n`,
      );
      const r = await kvlab(["run", plan, "--data", `${dir}/d${i}`, "--dry-run"]);
      assert.deepEqual(leaked(r.printed, c.secrets), []);
      assert.deepEqual(leaked(allBytes(`${dir}/d${i}`).text, c.secrets), []);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, new RegExp(`p${i}\\.yaml:4:\\d+: servers\\.0\\.url: `));
      assert.match(r.stderr, c.error);
    });
  }
  await t.step("kvlab sample --url with such a password", async () => {
    const r = await kvlab([
      "sample",
      "--url",
      "redis://u:p%zzSampleSecretXYZ@127.0.0.1:7412",
      "--data",
      `${dir}/sample`,
      "--duration",
      "1",
    ]);
    assert.deepEqual(leaked(r.printed, ["SampleSecretXYZ"]), []);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /malformed percent-escape/);
  });
  Deno.removeSync(dir, { recursive: true });
});
