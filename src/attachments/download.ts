import { Agent, request } from 'undici';

/** Why a file could not be read as text. */
export type DownloadFailure =
  | 'too_large' // over the byte limit (announced or while reading)
  | 'not_text' // binary content (NUL bytes) or a non-text content type
  | 'sign_in_page' // HTML where a file was expected: Slack's answer to a missing or bad token
  | 'http' // a status other than 2xx (after allowed redirects)
  | 'redirect' // too many redirects, or one without a usable Location
  | 'timeout'
  | 'network';

export type DownloadResult = { ok: true; text: string; bytes: number } | { ok: false; reason: DownloadFailure; status?: number };

/** Options of {@link downloadText}. */
export interface DownloadOptions {
  /**
   * Sent to the URL's own origin (e.g. `Authorization: Bearer xoxb-…`), and along a redirect
   * only where {@link DownloadOptions.keepAuthOnRedirect} allows it.
   */
  authHeaders?: Record<string, string>;
  /**
   * Whether a redirect to `target` (from a download that began at `first`) keeps `authHeaders`.
   * The platform decides: its file host may hand the download on to another of its own hosts
   * that still needs the token. Every hop is asked, and the first origin always keeps them.
   * @defaultValue only the first URL's origin gets them
   */
  keepAuthOnRedirect?: (target: URL, first: URL) => boolean;
  /**
   * Largest body accepted (MAX_ATTACHMENT_BYTES).
   * @defaultValue 100_000
   */
  maxBytes?: number;
  /**
   * Limit of the whole download, redirects included.
   * @defaultValue 10_000
   */
  timeoutMs?: number;
  /**
   * Redirects followed. A redirect to another origin is followed without `authHeaders`
   * unless `keepAuthOnRedirect` says otherwise.
   * @defaultValue 3
   */
  maxRedirects?: number;
  /** undici dispatcher, for tests. */
  dispatcher?: Agent;
}

const sharedDispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 16 });

/**
 * Downloads one file as UTF-8 text, bounded in size and time. Never throws; never logs (the
 * content is the user's). The caller decides what to tell the user from `reason`.
 */
export async function downloadText(url: string, options: DownloadOptions = {}): Promise<DownloadResult> {
  const maxBytes = options.maxBytes ?? 100_000;
  const maxRedirects = options.maxRedirects ?? 3;
  const signal = AbortSignal.timeout(options.timeoutMs ?? 10_000);
  const dispatcher = options.dispatcher ?? sharedDispatcher;
  const first = safeUrl(url);
  let current = url;

  try {
    for (let hop = 0; ; hop++) {
      const res = await request(current, {
        method: 'GET',
        headers: first && mayAuthorize(new URL(current), first, options.keepAuthOnRedirect) ? { ...options.authHeaders } : {},
        signal,
        dispatcher,
      });
      if (res.statusCode >= 300 && res.statusCode < 400) {
        await res.body.dump();
        const location = header(res.headers, 'location');
        if (!location || hop >= maxRedirects) return { ok: false, reason: 'redirect', status: res.statusCode };
        current = new URL(location, current).toString();
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump();
        return { ok: false, reason: 'http', status: res.statusCode };
      }
      const type = (header(res.headers, 'content-type') ?? '').toLowerCase();
      const html = type.startsWith('text/html');
      if (html && !/\.html?$/i.test(new URL(current).pathname)) {
        // A sign-in page, not the file (Slack answers 200 with HTML for a bad token).
        await res.body.dump();
        return { ok: false, reason: 'sign_in_page', status: res.statusCode };
      }
      if (/^(image|audio|video)\//.test(type) || type === 'application/pdf') {
        await res.body.dump();
        return { ok: false, reason: 'not_text', status: res.statusCode };
      }
      const announced = Number(header(res.headers, 'content-length'));
      if (Number.isFinite(announced) && announced > maxBytes) {
        discard(res.body);
        return { ok: false, reason: 'too_large', status: res.statusCode };
      }
      const parts: Buffer[] = [];
      let bytes = 0;
      for await (const part of res.body as AsyncIterable<Buffer>) {
        bytes += part.length;
        if (bytes > maxBytes) {
          discard(res.body);
          return { ok: false, reason: 'too_large', status: res.statusCode };
        }
        parts.push(part);
      }
      const body = Buffer.concat(parts);
      if (body.includes(0)) return { ok: false, reason: 'not_text', status: res.statusCode };
      const text = body.toString('utf8').replace(/^\uFEFF/, '');
      // An .html file is HTML too: only its content tells Slack's sign-in page from it.
      if (html && looksLikeSignInPage(text)) return { ok: false, reason: 'sign_in_page', status: res.statusCode };
      return { ok: true, text, bytes };
    }
  } catch (err) {
    if (signal.aborted) return { ok: false, reason: 'timeout' };
    return { ok: false, reason: (err as { name?: string }).name === 'AbortError' ? 'timeout' : 'network' };
  }
}

/**
 * Slack's sign-in page (its answer, often 200, to a file download with a missing or bad token):
 * its sign-in wording or form, or a page titled Slack that asks to sign in.
 */
export function looksLikeSignInPage(html: string): boolean {
  const head = html.slice(0, 200_000);
  if (/sign in to slack|id=["']signin_form["']|data-qa=["']sign_?in/i.test(head)) return true;
  return /<title>[^<]*\bSlack\b[^<]*<\/title>/i.test(head) && /\bsign[\s_-]?in\b/i.test(head);
}

/** Drops a body we will not read; undici reports the abort as an error nobody needs. */
function discard(body: { on(event: 'error', fn: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Whether a hop to `target` carries the auth headers: the first origin, or what the caller allows. */
function mayAuthorize(target: URL, first: URL, keepAuthOnRedirect: DownloadOptions['keepAuthOnRedirect']): boolean {
  if (target.origin === first.origin) return true;
  return keepAuthOnRedirect?.(target, first) ?? false;
}

function safeUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
