/** The three endpoints of the agent service. */
export type Endpoint = 'chat' | 'instances' | 'credentials';

/** Which requests a fault or delay applies to; an empty scope means every request. */
export interface FaultScope {
  endpoint?: Endpoint;
  instanceId?: string;
}

/** An error answer. `body` objects are sent as JSON; strings as they are. */
export interface FailureSpec {
  status: number;
  body?: string | object;
  /** @defaultValue application/json for object bodies, text/plain for strings, none for no body */
  contentType?: string;
  /** Retry-After header value: seconds, or an HTTP-date string. */
  retryAfter?: number | string;
  headers?: Record<string, string>;
}

export type FaultAction =
  | { type: 'fail'; spec: FailureSpec }
  | { type: 'hang' }
  | { type: 'malformed'; body: string; contentType: string }
  | { type: 'reset' }
  /** A 200 whose JSON body is `bytes` long, streamed chunked (no Content-Length), for client byte limits. */
  | { type: 'huge'; bytes: number };

interface Entry {
  remaining: number;
  action: FaultAction;
  scope: FaultScope;
}

function matches(scope: FaultScope, endpoint: Endpoint, instanceId: string | undefined): boolean {
  const endpointMatches = scope.endpoint === undefined || scope.endpoint === endpoint;
  return endpointMatches && (scope.instanceId === undefined || scope.instanceId === instanceId);
}

/** Queued faults (consumed in the order they were added) and standing delays. */
export class FaultPlan {
  private entries: Entry[] = [];
  private delays: Array<{ ms: number; scope: FaultScope }> = [];

  add(count: number, action: FaultAction, scope: FaultScope = {}): void {
    if (!Number.isInteger(count) || count < 1) throw new RangeError('fault count must be a whole number of at least 1');
    this.entries.push({ remaining: count, action, scope });
  }

  /** The next fault for this request, consuming one use of it. */
  take(endpoint: Endpoint, instanceId: string | undefined): FaultAction | undefined {
    const entry = this.entries.find((e) => matches(e.scope, endpoint, instanceId));
    if (!entry) return undefined;
    entry.remaining -= 1;
    if (entry.remaining === 0) this.entries.splice(this.entries.indexOf(entry), 1);
    return entry.action;
  }

  /** Sets (ms > 0) or clears (ms = 0) the delay for a scope; the most specific matching delay wins. */
  setDelay(ms: number, scope: FaultScope = {}): void {
    this.delays = this.delays.filter((d) => d.scope.endpoint !== scope.endpoint || d.scope.instanceId !== scope.instanceId);
    if (ms > 0) this.delays.push({ ms, scope });
  }

  delayFor(endpoint: Endpoint, instanceId: string | undefined): number {
    const specificity = (s: FaultScope) => (s.instanceId ? 2 : 0) + (s.endpoint ? 1 : 0);
    const found = this.delays.filter((d) => matches(d.scope, endpoint, instanceId));
    found.sort((a, b) => specificity(b.scope) - specificity(a.scope));
    return found[0]?.ms ?? 0;
  }

  /** Faults not yet used. */
  pending(): number {
    return this.entries.reduce((n, e) => n + e.remaining, 0);
  }

  clear(): void {
    this.entries = [];
    this.delays = [];
  }
}
