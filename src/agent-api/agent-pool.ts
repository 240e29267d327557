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

/** Request options of undici plus the hook this pool adds. */
export type PoolRequestOptions = Dispatcher.DispatchOptions & {
  /** Called once when the request is handed a connection and written (undici's `onRequestStart`). */
  onDispatch?: () => void;
};

/**
 * The connection pool of agent calls. Wraps undici's Agent to know, per call, when it got a
 * connection: the worker's time limit runs from there (a call queued behind others has not
 * started), and the metrics can tell calls waiting for a connection from calls in flight.
 */
export class AgentPool {
  readonly dispatcher: Dispatcher;
  private readonly agent: Agent;
  private waiting = 0;
  private inFlight = 0;

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
    return { waiting: this.waiting, inFlight: this.inFlight };
  }

  /** Closes idle connections and refuses new calls; calls in flight finish. */
  close(): Promise<void> {
    return this.agent.close();
  }

  private track(handler: Dispatcher.DispatchHandler, onDispatch?: () => void, signal?: AbortSignal): Dispatcher.DispatchHandler {
    let state: 'waiting' | 'inFlight' | 'done' = 'waiting';
    this.waiting += 1;
    const settle = () => {
      if (state === 'waiting') this.waiting -= 1;
      else if (state === 'inFlight') this.inFlight -= 1;
      state = 'done';
      signal?.removeEventListener('abort', giveUp);
    };
    // undici keeps an aborted request in its queue until a connection frees, and only then
    // reports the abort: the caller would wait on a full pool past its own deadline.
    // A call given up while waiting fails at once; it is dropped unsent when its turn comes.
    const giveUp = () => {
      if (state !== 'waiting') return;
      settle();
      handler.onResponseError?.(null as unknown as Dispatcher.DispatchController, signal?.reason as Error);
    };
    signal?.addEventListener('abort', giveUp, { once: true });
    return {
      onRequestStart: (controller, context) => {
        if (state === 'done') return controller.abort(signal?.reason as Error);
        this.waiting -= 1;
        this.inFlight += 1;
        state = 'inFlight';
        signal?.removeEventListener('abort', giveUp);
        onDispatch?.();
        handler.onRequestStart?.(controller, context);
      },
      onRequestUpgrade: (controller, statusCode, headers, socket) =>
        handler.onRequestUpgrade?.(controller, statusCode, headers, socket),
      onResponseStart: (controller, statusCode, headers, statusMessage) =>
        handler.onResponseStart?.(controller, statusCode, headers, statusMessage),
      onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd: (controller, trailers) => {
        settle();
        handler.onResponseEnd?.(controller, trailers);
      },
      onResponseError: (controller, error) => {
        if (state === 'done') return; // already failed while waiting
        settle();
        handler.onResponseError?.(controller, error);
      },
    };
  }
}

let processPool: AgentPool | undefined;

/** The pool every agent client of this process shares unless given its own: no cap on connections. */
export function defaultAgentPool(): AgentPool {
  return (processPool ??= new AgentPool());
}
