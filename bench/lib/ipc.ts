/**
 * The small request/response protocol between the bench driver and its child processes,
 * over Node's IPC channel. A child calls `serve` with its commands, then `ready` once.
 */

export interface IpcRequest {
  id: number;
  cmd: string;
  args?: unknown;
}

export type IpcReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

export interface IpcReady {
  event: 'ready';
  value: unknown;
}

export type Handlers = Record<string, (args: any) => unknown>;

function send(message: IpcReply | IpcReady): void {
  if (process.connected) process.send?.(message);
}

/** Answers the driver's commands. The child exits when the driver goes away (no orphans). */
export function serve(handlers: Handlers): void {
  process.on('message', (raw) => {
    const m = raw as IpcRequest;
    const handler = handlers[m.cmd];
    if (!handler) return send({ id: m.id, ok: false, error: `unknown command ${m.cmd}` });
    Promise.resolve()
      .then(() => handler(m.args))
      .then(
        (value) => send({ id: m.id, ok: true, value: value ?? null }),
        (err: unknown) => send({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
      );
  });
  process.on('disconnect', () => process.exit(0));
}

export function ready(value: unknown = null): void {
  send({ event: 'ready', value });
}
