import type { IncomingHttpHeaders } from 'node:http';
import type { AgentConfig } from '../config/load.js';
import type { Instance } from '../agent-api/types.js';
import type { Endpoint, FailureSpec, FaultScope } from './emulator-faults.js';

export interface AgentEmulatorOptions {
  /** @defaultValue 0 (any free port) */
  port?: number;
  /** @defaultValue 127.0.0.1 */
  host?: string;
  /** @defaultValue DEMO_API_KEY */
  apiKey?: string;
  /** The dashboard session accepted as a Cookie header. @defaultValue DEMO_SESSION_COOKIE */
  sessionCookie?: string;
  /** The dashboard session accepted as `Authorization: Bearer`. @defaultValue DEMO_SESSION_TOKEN */
  sessionToken?: string;
  /** @defaultValue DEMO_INSTANCES */
  instances?: Instance[];
  /** The agent's answer. @defaultValue demoReply of the instance */
  reply?: (instanceId: string, message: string) => string | Promise<string>;
  /**
   * Serve the control API under /__control/ (for other processes: tests, benchmarks, the CLI).
   * Off by default: any web page can POST to a loopback port, so `npm start`'s demo agent must not
   * take orders over HTTP. @defaultValue false
   */
  control?: boolean;
  /** Recorded calls kept (oldest dropped first), so a long-running demo does not grow. @defaultValue 10000 */
  maxCalls?: number;
  /**
   * Other accounts of the service, each with its own key, session and instances (a request is
   * served as the account its key or session belongs to), for per-workspace account tests.
   */
  otherAccounts?: Array<{ apiKey: string; sessionToken?: string; instances: Instance[] }>;
  /**
   * How long an idle keep-alive connection stays open. Node's 5 s default races a CPU-starved
   * client that reuses a connection as the server closes it ("other side closed"); the bench
   * sets a load balancer's 60 s. @defaultValue Node's (5000)
   */
  keepAliveTimeoutMs?: number;
}

/** A request the emulator received (control requests excluded). */
export interface RecordedCall {
  method: string;
  /** The path as sent, percent-encoding kept, without the query. */
  path: string;
  endpoint?: Endpoint;
  /** From the chat body or the credentials path. */
  instanceId?: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json?: unknown;
  at: number;
  /** The client's port: equal across calls when the client reused the connection. */
  remotePort?: number;
}

export interface ChatCall {
  instanceId: string;
  message: string;
  headers: IncomingHttpHeaders;
  at: number;
}

/** A running emulator of the agent service (../shared/agent-chat-api.md) with controllable faults. */
export interface AgentEmulator {
  /** `{base_url}`: `http://127.0.0.1:PORT/api/v1`. */
  readonly baseUrl: string;
  /** `http://127.0.0.1:PORT`, the host root (credentials live under `/api/instances`). */
  readonly origin: string;
  readonly port: number;
  readonly apiKey: string;
  readonly sessionCookie: string;
  readonly sessionToken: string;
  /** The account's instances; tests may change the array. */
  readonly instances: Instance[];
  readonly calls: RecordedCall[];
  /** Stored credentials: instance id → key → value. */
  readonly credentials: Map<string, Map<string, string>>;
  /** An AgentConfig for this emulator (API key and session cookie set). */
  agentConfig(overrides?: Partial<AgentConfig>): AgentConfig;
  chatCalls(instanceId?: string): ChatCall[];
  /** Resolves with the matching calls once there are at least `count` of them. */
  waitForCalls(count: number, filter?: (call: RecordedCall) => boolean, timeoutMs?: number): Promise<RecordedCall[]>;
  /** The next `count` matching requests get this answer. */
  failNext(count: number, spec: FailureSpec, scope?: FaultScope): void;
  /** The next `count` matching requests get a 429 with `Retry-After: retryAfterSeconds` (omitted when undefined). */
  rateLimitNext(count: number, retryAfterSeconds?: number | string, scope?: FaultScope): void;
  /** The next `count` matching requests are never answered (until releaseHanging or close). */
  hangNext(count: number, scope?: FaultScope): void;
  /** The next `count` matching requests get a 200 with this body. */
  malformedNext(count: number, body?: string, scope?: FaultScope): void;
  /** The next `count` matching requests have their connection reset. */
  resetNext(count: number, scope?: FaultScope): void;
  /** The next `count` matching requests get a 200 whose body is `bytes` long, streamed without Content-Length. */
  hugeNext(count: number, bytes: number, scope?: FaultScope): void;
  /** Requests received and not yet answered in full (or closed): calls open at the service now. */
  openRequests(): number;
  /** The most requests open at once since start or reset. */
  peakOpenRequests(): number;
  /** Delay every matching answer by `ms` (0 clears it). */
  setDelay(ms: number, scope?: FaultScope): void;
  /** Lets hanging requests go on to their normal answers. */
  releaseHanging(): void;
  /** How many requests are hanging now. */
  hangingCount(): number;
  /** Forgets recorded calls, queued faults, delays and stored credentials. */
  reset(): void;
  /** Stops the server and destroys every connection, hanging ones included. Idempotent. */
  close(): Promise<void>;
}
