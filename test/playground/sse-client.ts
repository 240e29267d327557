/** One Server-Sent Event as the page's EventSource would see it. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** A minimal EventSource for tests: collects events and waits for one that matches. */
export interface SseClient {
  events: SseEvent[];
  /** Resolves with the first event (already received or coming) that matches. */
  waitFor(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: controller.signal });
  if (res.status !== 200 || !res.body) throw new Error(`SSE answered ${res.status}: ${await res.text()}`);
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const e: SseEvent = { event: 'message', data: '' };
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) e.id = line.slice(4);
            else if (line.startsWith('event: ')) e.event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length === 0) continue;
          e.data = data.join('\n');
          events.push(e);
          for (const w of waiters) w();
        }
      }
    } catch {
      // Closed by the test or the server.
    }
  })();
  return {
    events,
    waitFor(match, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(match);
          if (!found) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching SSE event within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    close: () => controller.abort(),
  };
}

/** The JSON payload of a data event. */
export function payload(e: SseEvent): Record<string, unknown> {
  return JSON.parse(e.data) as Record<string, unknown>;
}
