import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { now } from '../lib/clock.js';

/** What the sink received since the last `collect`: one entry per reply chunk. */
export interface SinkBatch {
  ids: string[];
  /** Arrival time (sink clock, ms) of each entry of `ids`. */
  ats: number[];
  notices: number;
  malformed: number;
}

/**
 * The platform stand-in for the benchmark: accepts `POST /post` with the body the bench
 * reply ports send (`{ kind, messageId, ... }`) and records when each reply arrived. It keeps
 * only IDs and times, so it costs little CPU next to what it measures.
 */
export class BenchSink {
  private server!: Server;
  private batch: SinkBatch = { ids: [], ats: [], notices: 0, malformed: 0 };
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = now();
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as { kind?: string; messageId?: string };
          if (body.kind === 'notice') this.batch.notices++;
          else {
            this.batch.ids.push(String(body.messageId));
            this.batch.ats.push(at);
          }
        } catch {
          this.batch.malformed++;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    // Clients keep connections open between bursts, like a platform's API.
    this.server.keepAliveTimeout = 60_000;
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    const a = this.server.address();
    this.url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    return this;
  }

  /** Replies received so far (since the last collect). */
  get count(): number {
    return this.batch.ids.length;
  }

  /** Hands over what arrived and starts a new batch. */
  collect(): SinkBatch {
    const b = this.batch;
    this.batch = { ids: [], ats: [], notices: 0, malformed: 0 };
    return b;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
