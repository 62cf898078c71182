/**
 * Test support: a small PNG decoder (8-bit RGB or RGBA, not interlaced: what resvg writes) and
 * a pixel comparison with a tolerance, for the reference-image check of the figures.
 *
 * @module
 */

/** Decoded pixels: RGBA, row by row. */
export interface Pixels {
  width: number;
  height: number;
  rgba: Uint8Array;
}

async function inflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(
    new DecompressionStream("deflate"),
  );
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Decodes a PNG of 8-bit RGB or RGBA pixels. */
export async function decodePng(png: Uint8Array): Promise<Pixels> {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  if (view.getUint32(0) !== 0x89504e47) throw new TypeError("not a PNG");
  let width = 0, height = 0, colorType = 0;
  const idat: Uint8Array[] = [];
  for (let off = 8; off < png.length;) {
    const len = view.getUint32(off);
    const type = String.fromCharCode(...png.subarray(off + 4, off + 8));
    const data = png.subarray(off + 8, off + 8 + len);
    if (type === "IHDR") {
      width = view.getUint32(off + 8);
      height = view.getUint32(off + 12);
      if (data[8] !== 8 || data[12] !== 0) throw new TypeError("only 8-bit, non-interlaced PNGs");
      colorType = data[9];
    } else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") break;
    off += 12 + len;
  }
  const channels = colorType === 6 ? 4 : colorType === 2 ? 3 : 0;
  if (!channels) throw new TypeError(`unsupported PNG colour type ${colorType}`);
  const all = new Uint8Array(idat.reduce((n, d) => n + d.length, 0));
  idat.reduce((at, d) => (all.set(d, at), at + d.length), 0);
  const raw = await inflate(all);
  const stride = width * channels;
  const out = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = out.subarray(y * stride, (y + 1) * stride);
    const up = y > 0 ? out.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? row[i - channels] : 0;
      const b = up[i];
      const c = i >= channels ? up[i - channels] : 0;
      let v = line[i];
      switch (filter) {
        case 1:
          v += a;
          break;
        case 2:
          v += b;
          break;
        case 3:
          v += (a + b) >> 1;
          break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
          v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
      }
      row[i] = v & 0xff;
    }
  }
  if (channels === 4) return { width, height, rgba: out };
  const rgba = new Uint8Array(width * height * 4);
  for (let p = 0; p < width * height; p++) {
    rgba.set(out.subarray(p * 3, p * 3 + 3), p * 4);
    rgba[p * 4 + 3] = 255;
  }
  return { width, height, rgba };
}

/**
 * The share of pixels that differ visibly (some channel by more than `threshold` of 255)
 * between two images of the same size; 1 when the sizes differ.
 */
export function differingShare(a: Pixels, b: Pixels, threshold = 48): number {
  if (a.width !== b.width || a.height !== b.height) return 1;
  let n = 0;
  for (let p = 0; p < a.width * a.height; p++) {
    for (let ch = 0; ch < 4; ch++) {
      if (Math.abs(a.rgba[p * 4 + ch] - b.rgba[p * 4 + ch]) > threshold) {
        n++;
        break;
      }
    }
  }
  return n / (a.width * a.height);
}
