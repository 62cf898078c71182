// Reference images: every chart kind drawn from the bundled data (data/raw, rebuilt as
// `kvlab data` does) and rendered to PNG, compared with the committed image in
// __references__/ within a tolerance (antialiasing and font hinting may differ slightly). A
// figure that changes fails here and leaves `<name>-changed.png` beside its reference, so the
// change is seen in review; `UPDATE_REFERENCES=1` writes new references (never under CI).
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import {
  crossovers,
  loadResults,
  loadTable,
  memoryChart,
  plotChart,
  scaling,
  scalingChart,
  toPng,
  type VegaLiteSpec,
} from "../../src/analyze/mod.ts";
import { dataCommand } from "../../src/cli/data.ts";
import { decodePng, differingShare } from "../_support/png.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const REFS = new URL("./__references__/", import.meta.url).pathname;
/** At most this share of pixels may differ visibly (0.2 %: a moved value label is about 1 %). */
const TOLERANCE = 0.002;

async function check(name: string, spec: VegaLiteSpec): Promise<void> {
  const png = await toPng(spec, { scale: 1 });
  const path = `${REFS}${name}.png`;
  if (Deno.env.get("UPDATE_REFERENCES") === "1" && Deno.env.get("CI") !== "true") {
    Deno.mkdirSync(REFS, { recursive: true });
    Deno.writeFileSync(path, png);
    return;
  }
  let ref: Uint8Array;
  try {
    ref = Deno.readFileSync(path);
  } catch {
    throw new Error(`no reference ${path}: run with UPDATE_REFERENCES=1 and look at it`);
  }
  const share = differingShare(await decodePng(png), await decodePng(ref));
  if (share > TOLERANCE) {
    Deno.writeFileSync(`${REFS}${name}-changed.png`, png);
    assert.fail(
      `${name}: ${(share * 100).toFixed(2)} % of pixels differ (tolerance ${
        TOLERANCE * 100
      } %); see ${REFS}${name}-changed.png`,
    );
  }
}

Deno.test("every chart kind matches its reference image", async (t) => {
  const studies = Deno.makeTempDirSync({ prefix: "kvlab-refs-" });
  await dataCommand({ raw: `${ROOT}data/raw`, out: studies }, {
    print: () => {},
    printErr: () => {},
  });
  const s = (name: string) => `${studies}/${name}`;
  const kinds: [string, () => VegaLiteSpec][] = [
    ["throughput", () => plotChart(s("valkey-vs-redis"), "throughput", { by: "server" })],
    [
      "ratio",
      () => plotChart(s("valkey-vs-redis"), "ratio", { by: "server", baseline: "redis" }),
    ],
    ["latency", () => plotChart(s("redis-benchmark-modes"), "latency", { by: "label" })],
    [
      "delta",
      () =>
        plotChart(s("rdma-vs-tcp"), "delta", { dimension: "transport", from: "tcp", to: "rdma" }),
    ],
    ["sweep", () => plotChart(s("fixed-rate-latency"), "sweep", { by: "label" })],
    ["scaling", () => {
      const data = s("dragonfly-vs-redis-memory");
      const all = loadResults(data, { completeOnly: false }).filter(
        pl.col("last_progress_ops_per_sec").isNotNull(),
      );
      const axes = { x: "clients", by: "server", metric: "last_progress_ops_per_sec" };
      return scalingChart(scaling(all, axes), {
        ...axes,
        crossovers: crossovers(all, { ...axes, baseline: "redis", candidate: "dragonfly" }),
      });
    }],
    ["memory", () => {
      // in a fixed order (run ids are new at each rebuild)
      const memory = loadTable(s("dragonfly-vs-redis-memory"), "memory")
        .sort(["server", "keys", "container_name", "source_line", "step"]);
      return memoryChart(memory);
    }],
  ];
  for (const [name, spec] of kinds) {
    await t.step(`${name} chart`, () => check(name, spec()));
  }
  Deno.removeSync(studies, { recursive: true });
});
