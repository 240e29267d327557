import { connect, type Socket } from 'node:net';

/** A client on a bare socket: it sends only what the test writes, so it can stall mid-request. */
export interface RawClient {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** The status code of the first response, once its status line arrived. */
  status(): Promise<number>;
  /** Resolves when the server (or the client) closed the connection. */
  closed: Promise<void>;
  write(data: string | Buffer): void;
}

/** Opens a connection to 127.0.0.1:`port` and writes `head` (a request line and headers, maybe a body start). */
export async function rawRequest(port: number, head: string): Promise<RawClient> {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  const statusWaiters: Array<(status: number) => void> = [];
  const statusOf = () => /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    const status = statusOf();
    if (status) for (const resolve of statusWaiters.splice(0)) resolve(Number(status));
  });
  // A reset (ECONNRESET when the server drops a connection over a cap) counts as closed.
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  if (head) socket.write(head);
  return {
    socket,
    received: () => text,
    status: () =>
      new Promise<number>((resolve, reject) => {
        const status = statusOf();
        if (status) return resolve(Number(status));
        statusWaiters.push(resolve);
        void closed.then(() => {
          const late = statusOf();
          if (late) resolve(Number(late));
          else reject(new Error(`connection closed without a response (received ${JSON.stringify(text.slice(0, 200))})`));
        });
      }),
    closed,
    write: (data) => socket.write(data),
  };
}

/** The request line and headers of a POST whose body is `length` bytes long (none of it sent). */
export function postHead(path: string, length: number, headers: Record<string, string> = {}): string {
  const lines = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Content-Length: ${length}`, 'Content-Type: application/json'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}
