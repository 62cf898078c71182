/**
 * libc by Deno FFI for the epoll engines (the open loop's `_ffi_shard.ts`, pub/sub's
 * `../pubsub/_ffi_run.ts`): the symbols, whether this process
 * can use them at all ({@link ffiProblem}), and the blocking helpers off the hot path
 * (connecting with a timeout, AUTH).
 *
 * `send` and `recv` return `ssize_t`; they are declared `i32` so that the hot path gets a plain
 * number instead of a BigInt: on x86_64 and aarch64 the low 32 bits of a 64-bit return register
 * hold the same value for every count below 2³¹ and for -1. Every buffer this engine passes is
 * far smaller than that.
 *
 * @module
 */

import { encodeCommand, RespReplyReader } from "./resp.ts";
import type { Endpoint } from "./wire.ts";
import { redactSent } from "../../text/redact.ts";

/** The libc functions the engine calls. */
export const LIBC = {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  connect: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  poll: { parameters: ["buffer", "u64", "i32"], result: "i32" },
  epoll_create1: { parameters: ["i32"], result: "i32" },
  epoll_ctl: { parameters: ["i32", "i32", "i32", "buffer"], result: "i32" },
  epoll_pwait2: { parameters: ["i32", "buffer", "i32", "buffer", "pointer"], result: "i32" },
  send: { parameters: ["i32", "buffer", "usize", "i32"], result: "i32" },
  recv: { parameters: ["i32", "buffer", "usize", "i32"], result: "i32" },
  recvmsg: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  clock_gettime: { parameters: ["i32", "buffer"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** An open libc. */
export type Libc = Deno.DynamicLibrary<typeof LIBC>;

/** Linux constants (x86_64 and aarch64 share them). */
export const K = {
  AF_INET: 2,
  SOCK_STREAM: 1,
  SOCK_NONBLOCK: 0o4000,
  SOCK_CLOEXEC: 0o2000000,
  IPPROTO_TCP: 6,
  TCP_NODELAY: 1,
  SOL_SOCKET: 1,
  SO_ERROR: 4,
  SO_TIMESTAMPNS: 35,
  EPOLLIN: 0x1,
  EPOLLOUT: 0x4,
  EPOLLERR: 0x8,
  EPOLLHUP: 0x10,
  EPOLL_CTL_ADD: 1,
  EPOLL_CTL_DEL: 2,
  EPOLL_CTL_MOD: 3,
  MSG_DONTWAIT: 0x40,
  MSG_NOSIGNAL: 0x4000,
  EAGAIN: 11,
  EINTR: 4,
  EINPROGRESS: 115,
  ENOSYS: 38,
  PR_SET_TIMERSLACK: 29,
  CLOCK_REALTIME: 0,
  CLOCK_MONOTONIC: 1,
} as const;

/** 32-bit words of a `struct epoll_event`: packed on x86_64 (12 bytes), padded elsewhere (16). */
export const EV_WORDS = Deno.build.arch === "x86_64" ? 3 : 4;
/** Word of a `struct epoll_event` where its data (the caller's slot number) starts. */
export const EV_DATA = Deno.build.arch === "x86_64" ? 1 : 2;

/** Opens libc (throws where it cannot). */
export function openLibc(): Libc {
  return Deno.dlopen("libc.so.6", LIBC);
}

/** The calling thread's `errno`. */
export function errno(lib: Libc): number {
  const p = lib.symbols.__errno_location();
  return p === null ? 0 : new Deno.UnsafePointerView(p).getInt32();
}

/** The IPv4 address of a hostname the engine can reach without a resolver, or null. */
export function ipv4Of(hostname: string): number[] | null {
  const h = hostname === "localhost" ? "127.0.0.1" : hostname;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (!m) return null;
  const b = m.slice(1).map(Number);
  return b.every((x) => x <= 255) ? b : null;
}

/**
 * Why the epoll engine cannot run here, or null when it can: not Linux, no FFI permission,
 * libc (or its `epoll_pwait2`) missing, a kernel older than 5.11 (ENOSYS), a host that is not
 * an IPv4 address, or no network permission for it (FFI would bypass Deno's `--allow-net`, so
 * the engine asks for it as Deno's TCP would).
 *
 * @param endpoint Where the engine would connect.
 * @returns A sentence, or null.
 */
export function ffiProblem(endpoint: Endpoint): string | null {
  if (Deno.build.os !== "linux") return `not Linux (${Deno.build.os})`;
  const host = endpoint.hostname ?? "127.0.0.1";
  if (ipv4Of(host) === null) return `the host is not an IPv4 address: ${host}`;
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") {
    return "no FFI permission (--allow-ffi)";
  }
  const net = Deno.permissions.querySync({ name: "net", host: `${host}:${endpoint.port}` });
  if (net.state !== "granted") return `no network permission for ${host}:${endpoint.port}`;
  let lib: Libc;
  try {
    lib = openLibc();
  } catch (e) {
    return `libc.so.6 cannot be loaded: ${e instanceof Error ? e.message : String(e)}`;
  }
  try {
    const ep = lib.symbols.epoll_create1(0);
    if (ep < 0) return `epoll_create1 failed (errno ${errno(lib)})`;
    const r = lib.symbols.epoll_pwait2(ep, new Uint8Array(12), 1, new Uint8Array(16), null);
    const e = r < 0 ? errno(lib) : 0;
    lib.symbols.close(ep);
    if (e === K.ENOSYS) return "the kernel has no epoll_pwait2 (Linux < 5.11)";
    if (r < 0) return `epoll_pwait2 failed (errno ${e})`;
    return null;
  } finally {
    lib.close();
  }
}

/**
 * The engine a load step uses (the open loop's and pub/sub's): `ffi` where it can run (and was
 * not refused), else `deno`, with the reason `ffi` was not used.
 *
 * @param wanted `auto`, `ffi` or `deno`.
 * @param endpoint Where the engine would connect.
 * @returns The engine and its note (`asked for` when `deno` was asked for; null when `ffi` runs).
 * @throws {Deno.errors.NotSupported} When `ffi` is asked for and cannot run here.
 * @throws {TypeError} On another name.
 */
export function chooseFfiEngine(
  wanted: "auto" | "ffi" | "deno",
  endpoint: Endpoint,
): { engine: "ffi" | "deno"; note: string | null } {
  switch (wanted) {
    case "deno":
      return { engine: "deno", note: "asked for" };
    case "ffi":
    case "auto": {
      const problem = ffiProblem(endpoint);
      if (problem === null) return { engine: "ffi", note: null };
      if (wanted === "ffi") throw new Deno.errors.NotSupported(`engine ffi: ${problem}`);
      return { engine: "deno", note: problem };
    }
    default:
      throw new TypeError(`invalid engine: ${wanted} (expected auto, ffi or deno)`);
  }
}

/** Waits until `fd` is ready for `w.events` (poll), up to `w.timeoutMs`; false on timeout. */
function waitFd(lib: Libc, fd: number, w: { events: number; timeoutMs: number }): boolean {
  const { events, timeoutMs } = w;
  const pfd = new Int32Array(2);
  pfd[0] = fd;
  pfd[1] = events; // short events, short revents (little-endian: revents is the high half)
  const r = lib.symbols.poll(new Uint8Array(pfd.buffer), 1n, Math.max(0, Math.ceil(timeoutMs)));
  return r > 0;
}

/**
 * Opens a nonblocking TCP connection (TCP_NODELAY on) and sends AUTH when a password is given.
 *
 * @returns The file descriptor.
 * @throws {Deno.errors.TimedOut} When it is not up within `timeoutMs`.
 * @throws {Deno.errors.ConnectionRefused} When the server refuses it.
 * @throws {Deno.errors.PermissionDenied} When AUTH fails.
 */
export function connectFd(lib: Libc, endpoint: Endpoint, timeoutMs: number): number {
  const C = lib.symbols;
  const ip = ipv4Of(endpoint.hostname ?? "127.0.0.1")!;
  const fd = C.socket(K.AF_INET, K.SOCK_STREAM | K.SOCK_NONBLOCK | K.SOCK_CLOEXEC, 0);
  if (fd < 0) throw new Deno.errors.NotSupported(`socket() failed (errno ${errno(lib)})`);
  try {
    const addr = new Uint8Array(16);
    const v = new DataView(addr.buffer);
    v.setUint16(0, K.AF_INET, true);
    v.setUint16(2, endpoint.port, false);
    addr.set(ip, 4);
    const where = `${ip.join(".")}:${endpoint.port}`;
    if (C.connect(fd, addr, 16) !== 0) {
      const e = errno(lib);
      if (e !== K.EINPROGRESS) throw refused(where, e);
      if (!waitFd(lib, fd, { events: K.EPOLLOUT, timeoutMs })) {
        throw new Deno.errors.TimedOut(`connect to port ${endpoint.port} timed out`);
      }
      const err = new Int32Array(1);
      C.getsockopt(fd, K.SOL_SOCKET, K.SO_ERROR, new Uint8Array(err.buffer), new Uint32Array([4]));
      if (err[0] !== 0) throw refused(where, err[0]);
    }
    C.setsockopt(fd, K.IPPROTO_TCP, K.TCP_NODELAY, new Int32Array([1]), 4);
    if (endpoint.password !== undefined) auth(lib, fd, { password: endpoint.password, timeoutMs });
    return fd;
  } catch (e) {
    C.close(fd);
    throw e;
  }
}

function refused(where: string, e: number): Error {
  return e === 111
    ? new Deno.errors.ConnectionRefused(`Connection refused (os error 111): ${where}`)
    : new Deno.errors.ConnectionRefused(`connect to ${where} failed (os error ${e})`);
}

/** Sends AUTH and reads its reply (blocking, up to `a.timeoutMs`). */
function auth(lib: Libc, fd: number, a: { password: string; timeoutMs: number }): void {
  const { password, timeoutMs } = a;
  const C = lib.symbols;
  const bytes = encodeCommand(["AUTH", password]);
  const end = performance.now() + timeoutMs;
  const late = () => new Deno.errors.TimedOut("AUTH got no reply in time");
  for (let at = 0; at < bytes.length;) {
    const n = C.send(fd, bytes.subarray(at), BigInt(bytes.length - at), K.MSG_NOSIGNAL);
    if (n > 0) at += n;
    else if (errno(lib) !== K.EAGAIN) throw new Deno.errors.ConnectionReset("AUTH not sent");
    else if (!waitFd(lib, fd, { events: K.EPOLLOUT, timeoutMs: end - performance.now() })) {
      throw late();
    }
  }
  let errors = 0;
  let replies = 0;
  const reader = new RespReplyReader((kind) => {
    replies++;
    if (kind === "error") errors++;
  });
  const buf = new Uint8Array(4096);
  while (replies === 0) {
    if (!waitFd(lib, fd, { events: K.EPOLLIN, timeoutMs: end - performance.now() })) throw late();
    const n = C.recv(fd, buf, BigInt(buf.length), 0);
    if (n === 0) throw new Deno.errors.ConnectionReset("server closed the connection");
    if (n > 0) reader.feed(buf, n);
  }
  if (errors > 0) {
    // (a server may echo the password it refused)
    const said = redactSent(reader.lastError, password);
    throw new Deno.errors.PermissionDenied(`AUTH failed: ${said}`);
  }
}

/** A buffer whose address does not move (off the V8 heap), for pointers handed to libc. */
function pinned(bytes: number): Uint8Array {
  return new Uint8Array(new ArrayBuffer(bytes));
}

const address = (b: Uint8Array) => BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(b)));

/**
 * `recvmsg` into one fixed buffer with the kernel's receive timestamp (SO_TIMESTAMPNS, the time
 * the reply's last segment reached the socket, CLOCK_REALTIME): a reply read late, in the
 * wake-up of a later send, is still timed when it arrived. The `msghdr`, `iovec` and control
 * buffers are made once.
 */
export class StampedReceiver {
  /** The bytes of the last {@link recv}. */
  readonly buf: Uint8Array;
  readonly #msg = pinned(64);
  readonly #msgView = new DataView(this.#msg.buffer);
  readonly #iov = pinned(16);
  readonly #ctl = pinned(128);
  readonly #ctlView = new DataView(this.#ctl.buffer);

  constructor(readonly lib: Libc, size: number) {
    this.buf = pinned(size);
    const iov = new DataView(this.#iov.buffer);
    iov.setBigUint64(0, address(this.buf), true);
    iov.setBigUint64(8, BigInt(size), true);
    const m = this.#msgView; // struct msghdr (64-bit Linux)
    m.setBigUint64(16, address(this.#iov), true); // msg_iov
    m.setBigUint64(24, 1n, true); // msg_iovlen
    m.setBigUint64(32, address(this.#ctl), true); // msg_control
  }

  /** Turns timestamps on for a socket. */
  enable(fd: number): void {
    this.lib.symbols.setsockopt(fd, K.SOL_SOCKET, K.SO_TIMESTAMPNS, new Int32Array([1]), 4);
  }

  /** One nonblocking `recvmsg`: bytes read into {@link buf}, 0 at end of stream, -1 on error. */
  recv(fd: number): number {
    this.#msgView.setUint32(40, this.#ctl.length, true); // msg_controllen (the kernel lowers it)
    this.#msgView.setUint32(44, 0, true);
    return this.lib.symbols.recvmsg(fd, this.#msg, K.MSG_DONTWAIT);
  }

  /**
   * The last {@link recv}'s timestamp as milliseconds since `baseS` (CLOCK_REALTIME seconds),
   * or NaN when the kernel gave none.
   */
  stampMs(baseS: number): number {
    const c = this.#ctlView;
    if (this.#msgView.getUint32(40, true) < 32) return NaN;
    // struct cmsghdr: u64 len, i32 level, i32 type, then struct timespec
    if (c.getInt32(8, true) !== K.SOL_SOCKET || c.getInt32(12, true) !== K.SO_TIMESTAMPNS) {
      return NaN;
    }
    return (c.getUint32(16, true) - baseS) * 1e3 + c.getUint32(24, true) / 1e6;
  }
}

/**
 * One nonblocking `send` of `buf`'s first `len` bytes, after `pending` (what an earlier send
 * left for EPOLLOUT: then nothing is sent now, the bytes join it, in order). The epoll engines'
 * writes (the open loop's connections, pub/sub's publishers).
 *
 * @returns What is left for EPOLLOUT (null: all sent), or the text of why the connection is
 *   lost.
 */
// `size` is `len` as a BigInt, made once by the caller (V8's fast FFI path takes a size_t only
// so); positional: the hot path of both engines' sends (no object per call)
export function sendAfter(
  lib: Libc,
  fd: number,
  pending: Uint8Array<ArrayBuffer> | null,
  buf: Uint8Array,
  len: number,
  size: bigint,
): Uint8Array<ArrayBuffer> | null | string {
  if (pending !== null) {
    const all = new Uint8Array(pending.length + len);
    all.set(pending);
    all.set(buf.subarray(0, len), pending.length);
    return all;
  }
  const n = lib.symbols.send(fd, buf, size, K.MSG_NOSIGNAL | K.MSG_DONTWAIT);
  if (n === len) return null;
  if (n < 0) {
    const e = errno(lib);
    if (e !== K.EAGAIN && e !== K.EINTR) return osError("send", e);
  }
  return buf.slice(Math.max(0, n), len);
}

/** The text of a failed call, as Deno names its errors. */
export function osError(call: string, e: number): string {
  const name = e === 104 ? "ConnectionReset" : e === 32 ? "BrokenPipe" : "Error";
  return `${name}: ${call}() failed (os error ${e})`;
}

/**
 * The epoll engines' clock (the open loop's `FfiShard`, pub/sub's `FfiPubSub`): CLOCK_MONOTONIC
 * by FFI (about 0.1 µs a read against `performance.now()`'s 0.25), as milliseconds since the
 * run's start, and the kernel's CLOCK_REALTIME receive stamps converted to the same milliseconds.
 */
export class RunClock {
  readonly #lib: Libc;
  readonly #ts = new Uint32Array(4);
  readonly #bytes = new Uint8Array(this.#ts.buffer);
  #baseS = 0;
  #t0 = 0;
  #realBaseS = 0;
  #realT0 = 0;

  /** @param lib An open libc; until {@link setOrigin}, the origin is now. */
  constructor(lib: Libc) {
    this.#lib = lib;
    lib.symbols.clock_gettime(K.CLOCK_MONOTONIC, this.#bytes);
    this.#baseS = this.#ts[0]; // (seconds only: the low word is enough for a run)
    this.#t0 = this.now();
  }

  /** Milliseconds since the origin. */
  now(): number {
    this.#lib.symbols.clock_gettime(K.CLOCK_MONOTONIC, this.#bytes);
    const ts = this.#ts;
    return (ts[0] - this.#baseS) * 1e3 + ts[2] / 1e6 - this.#t0;
  }

  /** Sets the origin to `startAtEpochMs` (wall clock, `performance.timeOrigin` based). */
  setOrigin(startAtEpochMs: number): void {
    const mono = this.now() + this.#t0;
    const epoch = performance.timeOrigin + performance.now();
    this.#t0 = mono + (startAtEpochMs - epoch);
    // the kernel stamps receives on CLOCK_REALTIME: the same instant, in run milliseconds
    const run = this.now();
    this.#lib.symbols.clock_gettime(K.CLOCK_REALTIME, this.#bytes);
    this.#realBaseS = this.#ts[0];
    this.#realT0 = this.#ts[2] / 1e6 - run;
  }

  /** The last receive's kernel stamp in run milliseconds, or NaN when it has none. */
  realMs(rx: StampedReceiver): number {
    return rx.stampMs(this.#realBaseS) - this.#realT0;
  }
}

/**
 * Reads `fd` until it has nothing more (one `recvmsg`, more only when the buffer filled),
 * handing each read's length to `feed` (the bytes are in `rx.buf`, its stamp in `rx`), which
 * returns false when reading must stop (it closed the connection). The epoll engines' reads.
 *
 * @returns null, or the text of why the connection is lost (closed, failed, or `feed` threw).
 */
export function recvAll(
  rx: StampedReceiver,
  fd: number,
  feed: (n: number) => boolean | void,
): string | null {
  for (;;) {
    const n = rx.recv(fd);
    if (n > 0) {
      let more: boolean | void;
      try {
        more = feed(n);
      } catch (e) {
        return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      }
      if (n < rx.buf.length || more === false) return null;
    } else if (n === 0) return "ConnectionReset: server closed the connection";
    else {
      const e = errno(rx.lib);
      return e === K.EAGAIN || e === K.EINTR ? null : osError("recv", e);
    }
  }
}
