// Figures as a reader sees them: each chart rendered to a Vega view (headless) and its drawn
// marks read back — value labels at the bar ends, axis labels apart, NS rules apart, ticks at
// the data, legends inside the canvas.
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import {
  compare,
  crossovers,
  delta,
  deltaChart,
  deltaE,
  latencyChart,
  memoryChart,
  MIN_DELTA_E,
  ratioChart,
  scaling,
  scalingChart,
  sweepChart,
  sweepTable,
  throughputChart,
  toSvg,
} from "../../src/analyze/mod.ts";
import { drawn, overlap } from "../_support/vega_view.ts";

/** Three repetitions per arm, so compare gives intervals (whiskers) and ratios both ways. */
// 5 repetitions per arm: compare gives an interval (a whisker) from 4 on
function repeated(): pl.DataFrame {
  const rows: Record<string, unknown>[] = [];
  const base = { SET: 100_000, GET: 90_000, INCR: 95_000, LPUSH: 80_000 };
  const factor = { SET: 1.04, GET: 0.66, INCR: 1.5, LPUSH: 0.98 };
  for (const [test, ops] of Object.entries(base)) {
    for (let rep = 0; rep < 5; rep++) {
      const noise = 1 + (rep - 1) * 0.03;
      rows.push({ test, server: "redis", ops_per_sec: ops * noise });
      rows.push({
        test,
        server: "valkey",
        ops_per_sec: ops * factor[test as keyof typeof factor] * (1 + (1 - rep) * 0.05),
      });
    }
  }
  return pl.DataFrame(rows);
}

/**
 * Two groups (clients 1 and 10) of SET, GET, INCR and LPUSH, 5 runs per side, with avg, p50, p95
 * and p99: LPUSH noisy (inconclusive); at 10 clients two valkey runs of GET have a p99 thirty
 * times the rest (an interval to about +3,800 %).
 */
function deltaRows(): pl.DataFrame {
  const rows: Record<string, unknown>[] = [];
  const noisy = [0.8, 1.25, 0.9, 1.2, 1.0];
  for (const clients of [1, 10]) {
    for (const [test, f] of [["SET", 1.1], ["GET", 0.9], ["INCR", 1.3], ["LPUSH", 1]] as const) {
      for (let rep = 0; rep < 5; rep++) {
        for (const label of ["redis", "valkey"]) {
          const v = label === "valkey";
          const k = (1 + rep * 0.02) * (v && test === "LPUSH" ? noisy[rep] : 1);
          const wild = v && test === "GET" && clients === 10 && rep >= 3 ? 30 + rep : 1;
          const ms = (x: number) => x * clients / (v ? f : 1) * k;
          rows.push({
            test,
            label,
            clients,
            ops_per_sec: 50_000 * clients ** 0.3 * (v ? f : 1) / k,
            avg_latency_ms: ms(0.2),
            p50_latency_ms: ms(0.18),
            p95_latency_ms: ms(0.4),
            p99_latency_ms: ms(0.6) * wild,
          });
        }
      }
    }
  }
  return pl.DataFrame(rows);
}

/** Latency-spectrum rows of one arm: 0 to `most` nines, 0.1 ms more at each. */
function ninesRows(test: string, clients: number, label: string, most: number) {
  return Array.from({ length: most + 1 }, (_, nines) => ({
    test,
    clients,
    label,
    from_percentile: 100 * (1 - 10 ** -nines),
    to_percentile: 100,
    latency_ms: 0.1 * (nines + 1),
    nines,
    count: 1000,
  }));
}

Deno.test("figures as drawn", async (t) => {
  await t.step("memoryChart(): an 800 px canvas, log ticks apart, % labels apart", async () => {
    // the bundled dragonfly-vs-redis study's sizes: 100k … 500k, 1M, 10M, 100M keys
    const rows: Record<string, unknown>[] = [];
    const sizes = [1e5, 2e5, 3e5, 4e5, 5e5, 1e6, 1e7, 1e8];
    for (const [server, f] of [["dragonfly", 1], ["redis", 1.3]] as const) {
      for (const keys of sizes) {
        const bytes = keys * 80 * (keys >= 1e6 ? f : 1);
        rows.push({
          server,
          keys,
          container_memory_bytes: bytes * 1.1,
          used_memory_bytes: bytes,
          used_memory_rss_bytes: bytes * 1.05,
        });
      }
    }
    const { items, width } = await drawn(memoryChart(pl.DataFrame(rows)));
    // issue 22: 1,544 px wide, the log–log panels using half of it
    assert.ok(width <= 820, `canvas ${width} px wide`);
    const apart = (what: string, xs: typeof items) => {
      for (const a of xs) {
        for (const b of xs) {
          // 2 px apart at least: "10M100M" touched without overlapping
          if (a !== b) assert.ok(!overlap(a, b, -2), `${what}: "${a.text}" touches "${b.text}"`);
        }
      }
    };
    // issue 22: "10M100M" on the keys axes
    const shown = items.filter((i) => i.role === "axis-label" && i.opacity > 0);
    const keyTicks = shown.filter((i) => /^\d+[kMG]$/.test(i.text ?? ""));
    assert.ok(keyTicks.length >= 9, `${keyTicks.length} key tick labels`);
    for (const panel of [0, 1, 2]) {
      const labels = keyTicks.slice(panel * 4, panel * 4 + 4).map((i) => i.text);
      assert.deepEqual(labels, ["100k", "1M", "10M", "100M"]);
    }
    for (const panel of new Set(keyTicks.map((i) => Math.round(i.y)))) {
      apart("keys axis", keyTicks.filter((i) => Math.round(i.y) === panel));
    }
    const yTicks = shown.filter((i) => /^[\d,.]+$/.test(i.text ?? ""));
    apart("MiB axis", yTicks.filter((i) => i.x2 < 120));
    const pct = items.filter((i) => i.marktype === "text" && /^[+−-][\d.]+ %$/.test(i.text ?? ""));
    assert.equal(pct.length, sizes.length * 3);
    apart("% labels", pct);
    for (const i of items) {
      assert.ok(i.x2 <= width + 0.5, `${i.text ?? i.role} ends at ${i.x2} > ${width}`);
    }
  });

  await t.step("ratioChart(): each value label sits at its bar's end, one style", async () => {
    const cmp = compare(repeated(), { by: "server", baseline: "redis" });
    const { items } = await drawn(ratioChart(cmp));
    const bars = items.filter((i) => i.marktype === "rect" && i.role === "mark");
    const labels = items.filter((i) => i.marktype === "text" && /×$/.test(i.text ?? ""));
    assert.equal(bars.length, 4);
    assert.equal(labels.length, 4);
    for (const label of labels) {
      assert.match(label.text!, /^\d+\.\d\d×$/);
      const bar = bars.find((b) => b.datum.test === label.datum.test)!;
      const ratio = bar.datum.ratio as number;
      // the bar runs from 1 to the ratio: its end is its top above 1, its bottom below
      const end = ratio >= 1 ? bar.y : bar.y + (bar.height ?? 0);
      assert.ok(
        Math.abs(label.y - end) < 0.5,
        `${label.datum.test}: label at y=${label.y}, bar end at y=${end}`,
      );
    }
    // whiskers exist and reach beyond some bar ends: the labels did not follow them
    assert.ok(items.some((i) => i.marktype === "rule" && i.datum.ci_low !== undefined));
  });

  await t.step(
    "ratioChart(): compare's verdicts are drawn (hollow when inconclusive), with a legend",
    async () => {
      // issue 31: an inconclusive 0.40× (interval 0.26–1.37) was drawn like a result
      const wild = [0.27, 0.35, 0.41, 1.31, 1.4];
      const rows = repeated().vstack(pl.DataFrame(
        wild.flatMap((f, rep) => [
          { test: "MSET", server: "redis", ops_per_sec: 50_000 * (1 + rep * 0.01) },
          { test: "MSET", server: "valkey", ops_per_sec: 50_000 * f },
        ]),
      ));
      const cmp = compare(rows, { by: "server", baseline: "redis" });
      const verdicts = new Map(
        (cmp.select("test", "verdict").toRecords() as { test: string; verdict: string }[])
          .map((r) => [r.test, r.verdict]),
      );
      assert.deepEqual(Object.fromEntries(verdicts), {
        SET: "inconclusive",
        GET: "worse",
        INCR: "better",
        LPUSH: "inconclusive",
        MSET: "inconclusive",
      });
      const { items } = await drawn(ratioChart(cmp));
      const bars = items.filter((i) => i.marktype === "rect" && i.role === "mark");
      assert.equal(bars.length, 5);
      for (const bar of bars) {
        const test = String(bar.datum.test);
        // the bar's verdict is compare's, and it shows: solid when better or worse, hollow (its
        // outline in the arm's colour) when inconclusive
        assert.equal(bar.datum.verdict, verdicts.get(test), test);
        const hollow = verdicts.get(test) === "inconclusive";
        assert.equal(bar.fillOpacity, hollow ? 0 : 1, `${test}: fill opacity ${bar.fillOpacity}`);
        assert.equal(bar.stroke?.toLowerCase(), "#1f5fbf", `${test}: outline ${bar.stroke}`);
      }
      // a legend says what solid and hollow mean
      const legend = items.filter((i) => i.role === "legend-label").map((i) => i.text);
      assert.ok(legend.includes("inconclusive (hollow)"), legend.join());
      assert.ok(legend.includes("valkey"), legend.join()); // the arms' legend stays
      assert.ok(legend.includes("better") && legend.includes("worse"), legend.join());
      const titles = items.filter((i) => i.role === "legend-title").map((i) => i.text);
      assert.ok(titles.includes("verdict"), titles.join());
    },
  );

  await t.step(
    "throughputChart(): a y scale per panel, short names upright, the arms' legend named",
    async () => {
      // issue 31: pipeline 1's bars were ~6 % of the height beside pipeline 16's, on one axis
      const rows: Record<string, unknown>[] = [];
      for (const [label, f] of [["redis", 1], ["valkey", 1.2]] as const) {
        for (const test of ["SET", "GET", "INCR"]) {
          for (const pipeline of [1, 16]) {
            for (let rep = 0; rep < 3; rep++) {
              const ops = (pipeline === 1 ? 40_000 : 480_000) * f * (1 + rep * 0.02);
              rows.push({ test, label, pipeline, ops_per_sec: ops });
            }
          }
        }
      }
      const { items } = await drawn(throughputChart(pl.DataFrame(rows), { by: "label" }));
      const bars = items.filter((i) => i.marktype === "rect" && i.role === "mark");
      assert.equal(bars.length, 12);
      for (const pipeline of [1, 16]) {
        const mine = bars.filter((b) => b.datum.pipeline === pipeline);
        const tallest = Math.max(...mine.map((b) => b.height ?? 0));
        // the panel's tallest bar fills most of its panel (240 px)
        assert.ok(tallest > 150, `pipeline ${pipeline}: tallest bar ${tallest} px`);
      }
      // SET, GET, INCR fit upright under their bars: not turned 40°
      const names = items.filter((i) =>
        i.role === "axis-label" && /^(SET|GET|INCR)$/.test(i.text ?? "")
      );
      assert.ok(names.length >= 3);
      for (const n of names) assert.ok(!n.angle, `${n.text} turned ${n.angle}°`);
      // the legend's title says what the colours are, not the column's name
      const legends = items.filter((i) => i.role === "legend-title").map((i) => i.text);
      assert.deepEqual(legends, ["arm"]);
    },
  );

  await t.step(
    "ratioChart(): a whisker far beyond the bars is clipped with a mark, the bars keep their size",
    async () => {
      // issue 31: one whisker at 21.9× flattened every bar of a p99 ratio chart
      const cand: Record<string, number[]> = {
        SET: [1.0, 1.1, 1.2, 20, 25],
        GET: [1.2, 1.25, 1.3, 1.22, 1.28],
        INCR: [0.8, 0.82, 0.85, 0.81, 0.83],
      };
      const rows = Object.entries(cand).flatMap(([test, xs]) =>
        xs.flatMap((x, rep) => [
          { test, server: "redis", p99_latency_ms: 1 + rep * 0.01 },
          { test, server: "valkey", p99_latency_ms: x },
        ])
      );
      const cmp = compare(pl.DataFrame(rows), {
        by: "server",
        baseline: "redis",
        metric: "p99_latency_ms",
      });
      assert.ok((cmp.getColumn("ratio_ci_high").toArray() as number[]).some((x) => x > 20));
      const { items } = await drawn(ratioChart(cmp));
      const bars = items.filter((i) => i.marktype === "rect" && i.role === "mark");
      assert.equal(bars.length, 3);
      // GET 1.23× and INCR 0.80× are drawn at a readable length from the line at 1
      for (const b of bars) {
        assert.ok((b.height ?? 0) > 40, `${b.datum.test}: bar ${b.height} px long`);
      }
      // SET's whisker stops at the axis' end, where a mark says it goes on, with its end
      // the plot's top: where the y axis' line starts
      const plotTop = Math.min(...items.filter((i) => i.role === "axis-domain").map((i) => i.y1));
      const whiskers = items.filter((i) => i.marktype === "rule" && i.datum.ci_low !== undefined);
      for (const w of whiskers) assert.ok(w.y1 >= plotTop - 1, `whisker from ${w.y1}`);
      const arrow = items.find((i) => i.marktype === "symbol" && i.shape === "triangle-up");
      assert.ok(arrow, "no mark where the whisker is cut");
      assert.equal(arrow.datum.test, "SET");
      const end = items.find((i) => i.marktype === "text" && i.text === "24.51×");
      assert.ok(end, "the cut whisker's end is not written");
    },
  );

  await t.step(
    "deltaChart(): labels clear of whiskers, one cut whisker, four colours, verdicts, one baseline",
    async () => {
      const d = delta(deltaRows(), { dimension: "label", from: "redis", to: "valkey" });
      const spec = deltaChart(d);
      const { items } = await drawn(spec);
      // the verdicts are in the figure, not in its tooltips only
      assert.doesNotMatch(JSON.stringify(spec.title), /tooltip/);
      const legendTitles = items.filter((i) => i.role === "legend-title").map((i) => i.text);
      assert.ok(legendTitles.includes("verdict"), legendTitles.join());
      const bars = items.filter((i) => i.marktype === "rect" && i.role === "mark");
      const latencyBars = bars.filter((b) => b.datum.latency !== undefined);
      const factorBars = bars.filter((b) => b.datum.throughput_factor !== undefined);
      assert.equal(latencyBars.length, 2 * 4 * 4);
      assert.equal(factorBars.length, 2 * 4);
      for (const b of [...latencyBars, ...factorBars]) {
        const verdict = b.datum.verdict;
        assert.equal(b.fillOpacity, verdict === "inconclusive" ? 0 : 1, `${verdict}`);
      }
      assert.ok(factorBars.some((b) => b.datum.verdict === "inconclusive"));
      // avg, p50, p95 and p99 in colours told apart (four blues were not)
      const fills = new Map(latencyBars.map((b) => [String(b.datum.latency), String(b.fill)]));
      assert.equal(fills.size, 4);
      for (const [p, a] of fills) {
        for (const [q, b] of fills) {
          if (p < q) {
            assert.ok(deltaE(a, b) >= MIN_DELTA_E, `${p} ${a} and ${q} ${b}: ΔE ${deltaE(a, b)}`);
          }
        }
      }
      // no value label is crossed by a whisker
      const whiskers = items.filter((i) => i.marktype === "rule" && i.datum.ci_low !== undefined);
      assert.ok(whiskers.length > 0);
      const labels = items.filter((i) => i.marktype === "text" && i.text === i.datum.value_label);
      assert.equal(labels.length, 2 * 4 * 5);
      for (const l of labels) {
        for (const w of whiskers) {
          assert.ok(!overlap(l, w, 0.5), `"${l.text}" (${l.datum.test}) crossed by a whisker`);
        }
      }
      // the +3,800 % whisker is cut with a mark; the axes keep the bars readable
      const cut = items.filter((i) =>
        i.marktype === "text" && /^\+3\d{3}\.\d %$/.test(i.text ?? "")
      );
      assert.equal(cut.length, 1, "the cut whisker's end is not written");
      assert.ok(items.some((i) => i.marktype === "symbol" && i.shape === "triangle-up"));
      const ticks = (pred: (t: number) => boolean) =>
        items.filter((i) => i.role === "axis-label" && /^[−-]?[\d,.]+$/.test(i.text ?? ""))
          .map((i) => ({ i, v: Number((i.text ?? "").replace(/,/g, "").replace("−", "-")) }))
          .filter(({ v }) => pred(v));
      assert.ok(
        ticks(() => true).every(({ v }) => v < 1000),
        "an axis stretched to 1,000 % or more",
      );
      // each kind of panel on one axis in both groups: equal values, equal bars
      const sameInBoth = (rows: typeof bars, what: string) => {
        const [a, b] = rows;
        assert.equal(rows.length, 2, what);
        assert.ok(
          Math.abs((a.height ?? 0) - (b.height ?? 0)) < 0.5,
          `${what}: ${a.height} vs ${b.height} px`,
        );
      };
      sameInBoth(factorBars.filter((b) => b.datum.test === "SET"), "SET's factor");
      sameInBoth(
        latencyBars.filter((b) => b.datum.test === "INCR" && b.datum.latency === "p50"),
        "INCR's p50 change",
      );
    },
  );

  await t.step("latencyChart(): x-axis labels of narrow panels do not collide", async () => {
    const rows: Record<string, unknown>[] = [];
    for (const clients of [1, 50]) {
      for (const label of ["redis", "valkey"]) rows.push(...ninesRows("GET", clients, label, 6));
    }
    const { items } = await drawn(latencyChart(pl.DataFrame(rows), { by: "label" }));
    const xLabels = items.filter((i) =>
      i.role === "axis-label" && /^(0|90|99(\.9+)?|max)%?$/.test(i.text ?? "")
    );
    assert.ok(xLabels.length >= 14, `${xLabels.length} nines labels`);
    for (const a of xLabels) {
      for (const b of xLabels) {
        if (a !== b) assert.ok(!overlap(a, b), `"${a.text}" overlaps "${b.text}"`);
      }
    }
  });

  await t.step(
    "latencyChart(): a panel for each test and group with data, no empty one",
    async () => {
      // GET at 1 and 50 clients, SET at 50 only: three panels, not a 2 × 2 grid with a hole
      const rows: Record<string, unknown>[] = [];
      for (const [test, clients] of [["GET", 1], ["GET", 50], ["SET", 50]] as const) {
        for (const label of ["redis", "valkey"]) rows.push(...ninesRows(test, clients, label, 3));
      }
      const { items } = await drawn(latencyChart(pl.DataFrame(rows), { by: "label" }));
      const lines = items.filter((i) => i.marktype === "line" && i.role === "mark");
      const panels = new Set(lines.map((l) => `${l.datum.test} · clients ${l.datum.clients}`));
      assert.deepEqual([...panels].sort(), [
        "GET · clients 1",
        "GET · clients 50",
        "SET · clients 50",
      ]);
      // each panel is named by what it holds: three names, no row or column of a grid (whose
      // fourth cell, SET at 1 client, was drawn empty)
      const names = items.filter((i) => i.role === "title-text").map((i) => i.text ?? "")
        .filter((t) => t !== "latency by percentile");
      assert.deepEqual(names.sort(), [...panels].sort());
    },
  );

  await t.step("sweepChart(): NS rules of two arms at one step are drawn apart", async () => {
    const row = (label: string, req: number, ach: number, p50: number | null) => ({
      run_id: `${label}${req}`,
      test_index: 0,
      test: "GET",
      clients: 8,
      label,
      requested_ops_per_sec: req,
      ops_per_sec: ach,
      p50_latency_ms: p50,
      p99_latency_ms: p50 && p50 * 4,
      complete: true,
    });
    const table = sweepTable({
      results: pl.DataFrame([
        row("redis", 10_000, 10_000, 0.2),
        row("redis", 60_000, 47_000, 9),
        row("valkey", 10_000, 10_000, 0.2),
        row("valkey", 60_000, 52_000, 8),
      ]),
    });
    const spec = sweepChart(table);
    const { items } = await drawn(spec);
    const rules = items.filter((i) => i.marktype === "rule" && i.datum.verdict === "NS");
    assert.equal(rules.length, 2);
    assert.ok(Math.abs(rules[0].x - rules[1].x) > 3, `rules at ${rules[0].x} and ${rules[1].x}`);
    // the subtitle names the marker the chart draws (Vega's "cross" is a +)
    assert.match(JSON.stringify(spec.title), /\+ : a step not sustained/);
    // the arms and the percentiles, legends one above the other: the figure stays ~800 px wide
    const many = sweepTable({
      results: pl.DataFrame(
        [
          "Dragonfly",
          "HotKV",
          "Redis 1 thread",
          "Redis io-threads 8",
          "Valkey 1 thread",
          "Valkey io-threads 8",
        ]
          .flatMap((l) => [row(l, 10_000, 10_000, 0.2), row(l, 60_000, 50_000, 9)]),
      ),
    });
    const wide = await drawn(sweepChart(many));
    assert.ok(wide.width <= 820, `canvas ${wide.width} px wide`);
    const legends = wide.items.filter((i) => i.role === "legend-title").map((i) => i.text);
    assert.deepEqual(legends, ["arm", "percentile"]);
  });

  await t.step(
    "sweepChart(): one rate: an axis around it, every series marked, p50 and p99 told apart",
    async () => {
      // issue 31: a 10k–90k axis for one step at 20k; p50 and p99 apart by the lines' dash only
      const row = (label: string, p50: number) => ({
        run_id: label,
        test_index: 0,
        test: "GET",
        clients: 8,
        label,
        requested_ops_per_sec: 20_000,
        ops_per_sec: 20_000,
        p50_latency_ms: p50,
        p99_latency_ms: p50 * 4,
        complete: true,
      });
      const table = sweepTable({ results: pl.DataFrame([row("redis", 0.2), row("valkey", 0.15)]) });
      const { items } = await drawn(sweepChart(table));
      // a visible mark for each arm and percentile, p99's hollow beside p50's solid one
      const marks = items.filter((i) =>
        i.marktype === "symbol" && i.role === "mark" && i.datum.layer === "point" && i.opacity > 0
      );
      for (const label of ["redis", "valkey"]) {
        const mine = (p: string) =>
          marks.filter((m) => m.datum.label === label && m.datum.percentile === p);
        assert.equal(mine("p50").length, 1, `${label} p50`);
        assert.equal(mine("p99").length, 1, `${label} p99`);
        assert.notEqual(mine("p50")[0].fillOpacity ?? 1, 0, `${label} p50 hollow`);
        assert.equal(mine("p99")[0].fillOpacity, 0, `${label} p99 filled`);
      }
      // a legend says which is which
      const titles = items.filter((i) => i.role === "legend-title").map((i) => i.text);
      assert.deepEqual(titles, ["arm", "percentile"]);
      const labels = items.filter((i) => i.role === "legend-label").map((i) => i.text ?? "");
      assert.ok(labels.some((l) => l.startsWith("p50")) && labels.some((l) => l.startsWith("p99")));
      // the x axis holds the step, not a decade around it
      const ticks = items.filter((i) => i.role === "axis-label" && /^[\d,]+$/.test(i.text ?? ""))
        .map((i) => Number(i.text!.replace(/,/g, "")))
        .filter((v) => v >= 1000); // the rate axis (latency ticks are below 10)
      assert.ok(ticks.includes(20_000), ticks.join());
      for (const v of ticks) assert.ok(v >= 20_000 / 2 && v <= 20_000 * 2, `tick at ${v}`);
    },
  );

  await t.step("scalingChart(): x ticks at the data, a tie is no crossover", async () => {
    const df = pl.DataFrame({
      test: Array(4).fill("SET"),
      server: ["redis", "redis", "dragonfly", "dragonfly"],
      clients: [10, 50, 10, 50],
      ops_per_sec: [100, 200, 100, 250],
    });
    const { items } = await drawn(scalingChart(scaling(df, { x: "clients", by: "server" })));
    const labels = items.filter((i) => i.role === "axis-label");
    const bottom = Math.max(...labels.map((i) => i.y1));
    const ticks = labels.filter((i) => i.y1 === bottom).map((i) => i.text);
    assert.deepEqual(ticks, ["10", "50"]);
    // level at 10, ahead at 50: never behind, so no "dragonfly ahead from 50"
    const cross = crossovers(df, {
      x: "clients",
      by: "server",
      baseline: "redis",
      candidate: "dragonfly",
    });
    assert.equal(cross.getColumn("crossover_x").get(0), null);
  });

  await t.step("legends stay inside the canvas", async () => {
    const long = [
      "Redis 7.2 io-threads 4 · 100 clients",
      "Valkey 8.0.1 io-threads 4 · 100 clients",
    ];
    const cmp = compare(
      repeated().withColumns(
        pl.when(pl.col("server").eq(pl.lit("redis"))).then(pl.lit(long[0])).otherwise(
          pl.lit(long[1]),
        ).alias("server"),
      ),
      { by: "server", baseline: long[0] },
    );
    const { items, width } = await drawn(ratioChart(cmp));
    const legend = items.filter((i) => i.role.startsWith("legend"));
    assert.ok(legend.length > 0);
    for (const i of legend) {
      assert.ok(i.x2 <= width + 0.5, `${i.text ?? i.role} ends at ${i.x2} > ${width}`);
    }
    // labels that fit in the legend's 160 px are not cut ("redis · 10 cli…")
    const svg = await toSvg(
      throughputChart(
        pl.DataFrame({
          test: ["GET", "GET"],
          series: ["redis · 10 clients", "Redis io-threads 8"],
          ops_per_sec: [1, 2],
        }),
        { by: "series" },
      ),
    );
    assert.doesNotMatch(svg, /…/);
    assert.match(svg, /redis · 10 clients/);
    assert.match(svg, /Redis io-threads 8/);
  });
});
