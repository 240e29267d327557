import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';

/** Calls of one pool: waiting for a connection, and dispatched (request written, answer not finished). */
export interface AgentCallCounts {
  waiting: number;
  inFlight: number;
}

export interface AgentPoolOptions {
  /**
   * Connections per origin. Unset: no cap, so every call the worker runs (`WORKER_CONCURRENCY`)
   * gets its own connection at once; a cap below that makes the extra calls wait in undici's queue.
   */
  connections?: number;
  /** @defaultValue 30 000 ms */
  keepAliveTimeoutMs?: number;
}

/** Told once when its request is handed a connection and written (undici's `onRequestStart`). */
export interface DispatchListener {
  dispatched(): void;
}

/** Request options of undici plus the hook this pool adds. */
export type PoolRequestOptions = Dispatcher.DispatchOptions & {
  /** An object, not a callback: the agent call's Deadline itself, so no closure per call. */
  onDispatch?: DispatchListener;
};

/**
 * The connection pool of agent calls. Wraps undici's Agent to know, per call, when it got a
 * connection: the worker's time limit runs from there (a call queued behind others has not
 * started), and the metrics can tell calls waiting for a connection from calls in flight.
 */
export class AgentPool {
  readonly dispatcher: Dispatcher;
  private readonly agent: Agent;
  /** Calls of this pool by state, updated by each call's TrackedCall. */
  private readonly counters: AgentCallCounts = { waiting: 0, inFlight: 0 };

  constructor(options: AgentPoolOptions = {}) {
    this.agent = new Agent({
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
      connections: options.connections ?? null,
      // The client's own deadline bounds each call (AGENT_TIMEOUT_MS may exceed undici's 300 s defaults).
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    this.dispatcher = this.agent.compose((dispatch) => (opts, handler) => {
      const { onDispatch, ...rest } = opts as PoolRequestOptions;
      return dispatch(rest, this.track(handler, onDispatch, (rest as { signal?: AbortSignal }).signal));
    });
  }

  counts(): AgentCallCounts {
    return { ...this.counters };
  }

  /** Closes idle connections and refuses new calls; calls in flight finish. */
  close(): Promise<void> {
    return this.agent.close();
  }

  private track(handler: Dispatcher.DispatchHandler, onDispatch?: DispatchListener, signal?: AbortSignal): Dispatcher.DispatchHandler {
    this.counters.waiting += 1;
    return new TrackedCall(this.counters, handler, onDispatch, signal);
  }
}

/**
 * One call's handler: moves the call from waiting to in flight to done in its pool's counts,
 * passing every event on. A class, not an object of closures: one is made per agent call.
 */
class TrackedCall implements Dispatcher.DispatchHandler {
  private state: 'waiting' | 'inFlight' | 'done' = 'waiting';

  constructor(
    private readonly counts: AgentCallCounts,
    private readonly handler: Dispatcher.DispatchHandler,
    private readonly onDispatch: DispatchListener | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {
    // This object is the abort listener (handleEvent): no closure per call.
    signal?.addEventListener('abort', this, { once: true });
  }

  /**
   * The call's signal aborted. undici keeps an aborted request in its queue until a connection
   * frees, and only then reports the abort: the caller would wait on a full pool past its own
   * deadline. A call given up while waiting fails at once; it is dropped unsent when its turn comes.
   */
  handleEvent(): void {
    if (this.state !== 'waiting') return;
    this.settle();
    this.handler.onResponseError?.(null as unknown as Dispatcher.DispatchController, this.signal?.reason as Error);
  }

  private settle(): void {
    if (this.state === 'waiting') this.counts.waiting -= 1;
    else if (this.state === 'inFlight') this.counts.inFlight -= 1;
    this.state = 'done';
    this.signal?.removeEventListener('abort', this);
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    if (this.state === 'done') return controller.abort(this.signal?.reason as Error);
    this.counts.waiting -= 1;
    this.counts.inFlight += 1;
    this.state = 'inFlight';
    this.signal?.removeEventListener('abort', this);
    this.onDispatch?.dispatched();
    this.handler.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.settle();
    this.handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    if (this.state === 'done') return; // already failed while waiting
    this.settle();
    this.handler.onResponseError?.(controller, error);
  }
}

let processPool: AgentPool | undefined;

/** The pool every agent client of this process shares unless given its own: no cap on connections. */
export function defaultAgentPool(): AgentPool {
  return (processPool ??= new AgentPool());
}
