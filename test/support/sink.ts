import { createServer, type IncomingMessage as HttpRequest, type Server } from 'node:http';
import { once } from 'node:events';
import { request } from 'undici';
import { splitMarkdown } from '../../src/render/split-markdown.js';
import { PlatformError } from '../../src/core/errors.js';
import type { PlatformModule } from '../../src/core/platform-context.js';
import type { ReplyPort, ThreadMessage } from '../../src/core/reply-port.js';
import { webVocabulary } from '../../adapters/web/vocabulary.js';

/** A post the sink accepted. */
export interface SinkPost {
  kind: 'chunk' | 'notice' | 'working' | 'done' | 'failed';
  channelId: string;
  messageId: string;
  index: number;
  text: string;
  at: number;
}

/**
 * A local HTTP server that plays a chat platform for core tests and the benchmark: it
 * accepts posted replies, can refuse (429/500) or hang, and records what it accepted.
 */
export class Sink {
  readonly posts: SinkPost[] = [];
  private server!: Server;
  private faults: Array<{ status: number; retryAfter?: number } | 'hang'> = [];
  private waiters: Array<{ check: () => boolean; resolve: () => void }> = [];
  /** Called when a post arrives, before it is answered (tests kill workers here). */
  onRequest?: (post: SinkPost) => void;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    const a = this.server.address();
    this.url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    return this;
  }

  /** The next posts get these answers instead of 200. */
  fail(...faults: Array<{ status: number; retryAfter?: number } | 'hang'>): void {
    this.faults.push(...faults);
  }

  waitFor(check: (posts: SinkPost[]) => boolean, timeoutMs = 15_000): Promise<void> {
    if (check(this.posts)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`sink: condition not met in ${timeoutMs} ms (${this.posts.length} posts)`)), timeoutMs);
      this.waiters.push({ check: () => check(this.posts), resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: HttpRequest, res: import('node:http').ServerResponse): Promise<void> {
    let body = '';
    for await (const c of req) body += c;
    const post = { ...(JSON.parse(body) as Omit<SinkPost, 'at'>), at: Date.now() };
    this.onRequest?.(post);
    const fault = this.faults.shift();
    if (fault === 'hang') return;
    if (fault) {
      res.writeHead(fault.status, fault.retryAfter ? { 'retry-after': String(fault.retryAfter) } : {});
      res.end();
      return;
    }
    this.posts.push(post);
    res.writeHead(200).end('{}');
    this.waiters = this.waiters.filter((w) => (w.check() ? (w.resolve(), false) : true));
  }
}

/**
 * A reply port that posts to a Sink. Keep-alive connections and undici's `request`, like the
 * bridge's own platform clients (the Slack Web API client, src/undici-fetch.ts): the global
 * `fetch` cost the benchmark's workers about 0.3 ms of CPU per post that no real
 * platform port spends (WHATWG streams, a Response and an AbortSignal per call).
 */
export function sinkPort(url: string, maxChars = 2000, options: { indicators?: boolean; thread?: ThreadMessage[] } = {}): ReplyPort {
  const post = async (body: Omit<SinkPost, 'at'>) => {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${url}/post`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    } catch (err) {
      throw new PlatformError('web', 'network', `sink unreachable: ${(err as Error).message}`);
    }
    await res.body.dump();
    const status = res.statusCode;
    if (status === 429) {
      throw new PlatformError('web', 'rate_limited', 'sink rate limited', { status: 429, retryAfterMs: Number(res.headers['retry-after'] ?? 1) * 1000 });
    }
    if (status >= 500) throw new PlatformError('web', 'server_error', `sink answered ${status}`, { status });
    if (status >= 400) throw new PlatformError('web', 'refused', `sink answered ${status}`, { status });
  };
  return {
    platform: 'web',
    render: (markdown) => splitMarkdown(markdown, maxChars),
    postChunk: (t, text, index) => post({ kind: 'chunk', channelId: t.channelId, messageId: t.messageId, index, text }),
    postNotice: (t, text) => post({ kind: 'notice', channelId: t.channelId, messageId: t.messageId, index: 0, text }),
    ...(options.indicators
      ? {
          startWorking: (t) => post({ kind: 'working', channelId: t.channelId, messageId: t.messageId, index: 0, text: '' }),
          stopWorking: (t, outcome) =>
            post({ kind: outcome === 'ok' ? 'done' : 'failed', channelId: t.channelId, messageId: t.messageId, index: 0, text: '' }),
          fetchThread: async () => options.thread ?? [],
        }
      : {}),
  };
}

/** A platform module whose adapter does nothing (tests call ingress directly) and whose port posts to the sink. */
export function sinkPlatform(url: string, options: { indicators?: boolean; thread?: ThreadMessage[] } = {}): PlatformModule {
  return {
    platform: 'web',
    // The playground's notices (the sink stands in for it), under the default workspace noun.
    vocabulary: () => ({ ...webVocabulary, workspace: 'workspace' }),
    createReplyPort: () => sinkPort(url, 2000, options),
    createAdapter: () => ({ platform: 'web', start: async () => {}, stop: async () => {} }),
  };
}
