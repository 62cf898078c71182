// `./kvlab demo` sets up what it needs before running (`.ci/install demo`): it says what it
// does and never fails the demo. The real build and apt-get are not run here (they take
// minutes and change the machine); what is checked is the routing and the messages.
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

async function install(env: Record<string, string>): Promise<{ code: number; err: string }> {
  const r = await new Deno.Command("bash", {
    args: [`${ROOT}.ci/install`, "demo"],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: r.code, err: new TextDecoder().decode(r.stderr) };
}

Deno.test({
  name: ".ci/install demo: says what it cannot set up, and lets the demo run",
  // with redis-server installed, the apt-get step is not reached (this test must not run it)
  ignore: new Deno.Command("bash", { args: ["-c", "command -v redis-server"] }).outputSync()
        .code !== 0 ||
    new Deno.Command("bash", { args: ["-c", "command -v valkey-server"] }).outputSync().code === 0,
  fn: async (t) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-demo-install-" });
    Deno.mkdirSync(`${dir}/tools`);
    await t.step("no vendored Valkey: the demo runs Redis alone, and says so", async () => {
      const r = await install({
        KVLAB_VENDOR_DIR: `${dir}/vendor`,
        KVLAB_TOOLS_DIR: `${dir}/tools`,
      });
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /valkey-server is not installed and .*valkey-8\.0\.1\.tar\.gz is absent/);
      assert.match(r.err, /the demo runs Redis alone/);
    });
    // (stand-ins answering as the builds do: the routing is under test, not Valkey)
    const dest = `${dir}/tools/valkey-8.0.1`;
    const cache = (tls: boolean) => {
      Deno.mkdirSync(dest, { recursive: true });
      for (const bin of ["valkey-server", "valkey-benchmark"]) {
        Deno.writeTextFileSync(`${dest}/${bin}`, "#!/bin/sh\necho 'Valkey server v=8.0.1'\n");
        Deno.chmodSync(`${dest}/${bin}`, 0o755);
      }
      // a build without TLS: "Unrecognized option or bad number of args for: '--tls'"
      Deno.writeTextFileSync(
        `${dest}/valkey-cli`,
        tls
          ? "#!/bin/sh\necho 'valkey-cli 8.0.1'\n"
          : "#!/bin/sh\n[ \"$1\" = --tls ] && { echo \"Unrecognized option or bad number of args for: '--tls'\"; exit 1; }\necho 'valkey-cli 8.0.1'\n",
      );
      Deno.chmodSync(`${dest}/valkey-cli`, 0o755);
      Deno.writeTextFileSync(
        `${dest}/BUILD-INFO`,
        `valkey-cli 8.0.1\n${tls ? "make: BUILD_TLS=yes (OpenSSL 3.0.22)\n" : ""}`,
      );
    };
    await t.step("a Valkey with TLS in the tools cache: nothing to do, nothing said", async () => {
      cache(true);
      const r = await install({
        KVLAB_VENDOR_DIR: `${dir}/vendor`,
        KVLAB_TOOLS_DIR: `${dir}/tools`,
      });
      assert.equal(r.code, 0, r.err);
      assert.equal(r.err, "");
    });
    await t.step(
      "a Valkey without TLS in the tools cache and nothing to rebuild it from: said, kept",
      async () => {
        Deno.removeSync(dest, { recursive: true });
        cache(false);
        const r = await install({
          KVLAB_VENDOR_DIR: `${dir}/vendor`,
          KVLAB_TOOLS_DIR: `${dir}/tools`,
        });
        assert.equal(r.code, 0, r.err);
        assert.match(r.err, /valkey-8\.0\.1 was built without TLS and .* is absent to rebuild it/);
        assert.ok(Deno.statSync(`${dest}/valkey-server`).isFile);
      },
    );
    await t.step("KVLAB_DEMO_INSTALL=no skips it", async () => {
      Deno.removeSync(`${dir}/tools/valkey-8.0.1`, { recursive: true });
      const r = await install({
        KVLAB_VENDOR_DIR: `${dir}/vendor`,
        KVLAB_TOOLS_DIR: `${dir}/tools`,
        KVLAB_DEMO_INSTALL: "no",
      });
      assert.equal(r.code, 0, r.err);
      assert.equal(r.err, "");
    });
    await t.step("./kvlab demo goes through it", () => {
      assert.match(Deno.readTextFileSync(`${ROOT}kvlab`), /\.ci\/install" demo/);
    });
    Deno.removeSync(dir, { recursive: true });
  },
});
