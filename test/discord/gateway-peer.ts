import { WebSocket } from 'ws';
import type { Json } from '../emulators/discord/index.js';

/** A bare WebSocket client of the emulator's gateway: what it received, and how it was closed. */
export class Peer {
  readonly received: Json[] = [];
  readonly ws: WebSocket;
  closeCode?: number;
  constructor(url: string, query = '?v=10&encoding=json') {
    this.ws = new WebSocket(`${url}${query}`);
    this.ws.on('message', (raw) => this.received.push(JSON.parse(String(raw)) as Json));
    this.ws.on('close', (code) => (this.closeCode = code));
  }
  send(payload: Json) {
    this.ws.send(JSON.stringify(payload));
  }
  async next(pred: (p: Json) => boolean, label: string): Promise<Json> {
    for (let i = 0; i < 250; i++) {
      const found = this.received.find(pred);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no ${label}`);
  }
  async closed(): Promise<number | undefined> {
    for (let i = 0; i < 150 && this.closeCode === undefined; i++) await new Promise((r) => setTimeout(r, 20));
    return this.closeCode;
  }
  async hello(): Promise<this> {
    await this.next((p) => p.op === 10, 'HELLO');
    return this;
  }
}
