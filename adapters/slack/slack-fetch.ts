import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Agent, request } from 'undici';

/**
 * The `fetch` the Slack WebClient is given: undici's `request` under the part of the fetch
 * API the WebClient reads (status, headers, text/JSON/bytes, url). Node's global fetch builds
 * WHATWG streams, a Headers object and a Response for every call; in the burst benchmark that
 * was most of the ~0.25 ms of CPU each Slack call cost the worker (three per message: the
 * :eyes: reaction added, the reply posted, the reaction removed). Wire format, errors and
 * rate-limit handling stay the WebClient's own: it serialises the body and reads the answer.
 * A body that is not a string (a multipart file upload) goes to the global fetch.
 */
export function createSlackFetch(dispatcher: Agent = new Agent({ keepAliveTimeout: 30_000 })): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') return fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, {
        method: (init.method ?? 'GET') as 'GET' | 'POST',
        headers: init.headers as Record<string, string> | undefined,
        body: init.body ?? null,
        signal: init.signal ?? undefined,
        dispatcher,
      });
    } catch (err) {
      // As the global fetch fails: the WebClient wraps either in a WebAPIRequestError.
      throw new TypeError('fetch failed', { cause: err });
    }
    const raw = res.headers;
    const get = (name: string): string | null => {
      const v = raw[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : String(v);
    };
    let bytes: Promise<Buffer> | undefined;
    // `request` asks for no compression, so none should come; a server that compresses anyway
    // is read as fetch would read it.
    const encoding = get('content-encoding')?.trim().toLowerCase();
    const read = () =>
      (bytes ??= res.body.arrayBuffer().then(
        (b) => decode(Buffer.from(b), encoding),
        (err: unknown) => Promise.reject(new TypeError('fetch failed', { cause: err })),
      ));
    const response = {
      url,
      status: res.statusCode,
      statusText: '',
      ok: res.statusCode >= 200 && res.statusCode < 300,
      headers: {
        get,
        entries: () => Object.keys(raw).map((k) => [k, get(k)!] as [string, string])[Symbol.iterator](),
      },
      text: () => read().then((b) => b.toString('utf8')),
      json: () => read().then((b) => JSON.parse(b.toString('utf8')) as unknown),
      arrayBuffer: () => read().then((b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)),
    };
    return response as unknown as Response;
  }) as typeof fetch;
}

function decode(body: Buffer, encoding: string | undefined): Buffer {
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(body);
    if (encoding === 'deflate') return inflateSync(body);
    if (encoding === 'br') return brotliDecompressSync(body);
  } catch (err) {
    throw new TypeError('fetch failed', { cause: err });
  }
  return body;
}
