/**
 * Test support: opens an HTML page in headless Chromium (Debian's `chromium`) and reports what
 * a reader would see of its charts and tables. A script added to a copy of the page measures,
 * after load, each image's drawn pixels (on a canvas) and each inline SVG's sized paths, and
 * writes them into the DOM that `--dump-dom` prints. The browser runs with a deadline and is
 * stopped by its PID.
 *
 * @module
 */

/** What the page shows, as measured in the browser. */
export interface PageMarks {
  /** One entry per image: its displayed size and the share of its pixels that are not white. */
  images: { width: number; height: number; ink: number }[];
  /** One entry per inline `<svg>`: its displayed size and its paths with a non-empty box. */
  svgs: { width: number; height: number; paths: number }[];
  /** `<table>` elements. */
  tables: number;
  /** Text outputs of cells' return values (`Out[n]`). */
  executeResults: number;
}

/** The first Chromium on PATH, or null. */
export function findChromium(): string | null {
  for (const name of ["chromium", "chromium-browser"]) {
    for (const dir of (Deno.env.get("PATH") ?? "").split(":").filter(Boolean)) {
      try {
        if (Deno.statSync(`${dir}/${name}`).isFile) return `${dir}/${name}`;
      } catch { /* not here */ }
    }
  }
  return null;
}

const PROBE = `<script>
window.addEventListener("load", () => Promise.resolve().then(probe).catch((e) => {
  const pre = document.createElement("pre");
  pre.id = "kvlab-marks";
  pre.textContent = JSON.stringify({ error: String(e) });
  document.body.appendChild(pre);
}));
function probe() {
  const images = [];
  for (const img of document.querySelectorAll("img")) {
    // data: images are decoded by the load event; a broken one has no natural size
    const r = img.getBoundingClientRect();
    let ink = 0;
    if (img.naturalWidth > 0) {
      const c = document.createElement("canvas");
      c.width = img.naturalWidth;
      c.height = img.naturalHeight;
      const g = c.getContext("2d");
      g.drawImage(img, 0, 0);
      const px = g.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < px.length; i += 4) {
        if (px[i + 3] > 0 && (px[i] < 235 || px[i + 1] < 235 || px[i + 2] < 235)) n++;
      }
      ink = n / (c.width * c.height);
    }
    images.push({ width: r.width, height: r.height, ink });
  }
  const svgs = [...document.querySelectorAll("svg")].map((s) => {
    const r = s.getBoundingClientRect();
    const paths = [...s.querySelectorAll("path")].filter((p) => {
      const b = p.getBBox();
      return b.width > 0 || b.height > 0;
    }).length;
    return { width: r.width, height: r.height, paths };
  });
  const tables = document.querySelectorAll("table").length;
  const executeResults = document.querySelectorAll(
    ".jp-OutputArea-executeResult, .output_execute_result",
  ).length;
  const pre = document.createElement("pre");
  pre.id = "kvlab-marks";
  pre.textContent = JSON.stringify({ images, svgs, tables, executeResults });
  document.body.appendChild(pre);
}
</script>`;

/**
 * Opens `html` headless in Chromium and measures its charts and tables.
 *
 * @param chromium The browser executable.
 * @param html The page.
 * @param timeoutMs The deadline; the browser is killed by PID after it.
 * @returns What the page shows.
 * @throws {Error} When the browser fails or misses the deadline.
 */
export async function pageMarks(
  chromium: string,
  html: string,
  timeoutMs = 60_000,
): Promise<PageMarks> {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-browser-" });
  try {
    const page = `${dir}/page.html`;
    const text = Deno.readTextFileSync(html);
    const at = text.lastIndexOf("</body>");
    Deno.writeTextFileSync(
      page,
      at < 0 ? text + PROBE : text.slice(0, at) + PROBE + text.slice(at),
    );
    const child = new Deno.Command(chromium, {
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--mute-audio",
        `--user-data-dir=${dir}/profile`,
        "--window-size=1280,2000",
        "--virtual-time-budget=15000",
        "--dump-dom",
        `file://${page}`,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        Deno.kill(child.pid, "SIGKILL");
      } catch { /* gone */ }
    }, timeoutMs);
    const out = await child.output();
    clearTimeout(timer);
    const dom = new TextDecoder().decode(out.stdout);
    if (timedOut) throw new Error(`chromium: no page after ${timeoutMs} ms (${html})`);
    const m = /<pre id="kvlab-marks">([^<]*)<\/pre>/.exec(dom);
    if (!m) {
      const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-3).join(" ");
      throw new Error(`chromium: the probe did not report for ${html} (exit ${out.code}): ${err}`);
    }
    const marks = JSON.parse(m[1].replace(/&quot;/g, '"').replace(/&amp;/g, "&"));
    if (marks.error) throw new Error(`chromium: the probe failed on ${html}: ${marks.error}`);
    return marks as PageMarks;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
