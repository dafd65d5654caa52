import { timingSafeEqual } from 'node:crypto';

/**
 * workerd's one addition to Web Crypto that the Worker uses, `crypto.subtle.timingSafeEqual`
 * (https://developers.cloudflare.com/workers/runtime-apis/web-crypto/#timingsafeequal), given in
 * Node by Node's own constant-time compare, so the Worker's password and token checks run as unit
 * tests. Both refuse inputs of different lengths; the Worker compares lengths first.
 */
const subtle = crypto.subtle as SubtleCrypto & { timingSafeEqual?: (a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView) => boolean };
const bytes = (v: ArrayBuffer | ArrayBufferView) => (v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
subtle.timingSafeEqual ??= (a, b) => timingSafeEqual(bytes(a), bytes(b));
