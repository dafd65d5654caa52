/**
 * The one way Knock reads a body that came from another server (a webhook receiver's answer, a
 * DNS resolver's): at most `limit` bytes of what the runtime hands over, then the rest is
 * cancelled. `Content-Length` is never trusted for this: the runtime inflates a `gzip`, `deflate`
 * or `br` body as it streams it (RFC 9110 §8.4), while the length the server declared is that of
 * the compressed bytes, so 2 kB declared may be 2 MB read.
 */
export const readCapped = async (response: Response, limit: number): Promise<Uint8Array> => {
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const kept = new Uint8Array(limit);
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = value.subarray(0, limit - size);
      kept.set(take, size);
      size += take.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return kept.subarray(0, size);
};

/** `readCapped` as UTF-8 text (a character cut by the bound becomes U+FFFD). */
export const readCappedText = async (response: Response, limit: number): Promise<string> => new TextDecoder().decode(await readCapped(response, limit));
