import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics of one process. Names follow Prometheus conventions (unit suffixes,
 * `_total` for counters). A registry per instance keeps tests independent.
 */
export class Metrics {
  readonly registry = new Registry();

  /**
   * Queued messages that ended, by outcome: `replied`, `gave_up` (by a worker), `withdrawn` (its
   * sender deleted it or edited it to ask nothing, or its workspace removed the app), `lost` (its
   * record was gone: expired, or lost by Redis). Idle, per platform: ingress `queued` = their sum.
   */
  readonly messages = new Counter({
    name: 'agent_bridge_messages_total',
    help: 'Queued messages that ended, by platform and outcome (replied, gave_up, withdrawn, lost)',
    labelNames: ['platform', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Messages that reached ingress, by platform and result (queued, duplicate, dropped reason). */
  readonly ingress = new Counter({
    name: 'agent_bridge_ingress_messages_total',
    help: 'Messages seen by ingress, by platform and result',
    labelNames: ['platform', 'result'] as const,
    registers: [this.registry],
  });

  readonly agentLatency = new Histogram({
    name: 'agent_bridge_agent_request_duration_seconds',
    help: 'Latency of agent service calls, by endpoint, agent instance and HTTP status',
    labelNames: ['endpoint', 'agent_instance', 'status'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  readonly agentRequests = new Counter({
    name: 'agent_bridge_agent_requests_total',
    help: 'Agent service calls, by endpoint, agent instance and HTTP status (or error kind)',
    labelNames: ['endpoint', 'agent_instance', 'status'] as const,
    registers: [this.registry],
  });

  readonly queueDepth = new Gauge({
    name: 'agent_bridge_queue_jobs',
    help: 'Jobs in the queue, by state',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  /** Set by the composition root: the agent client's pool counts, read at each scrape. */
  private agentCalls: () => { waiting: number; inFlight: number } = () => ({ waiting: 0, inFlight: 0 });

  readonly agentCallsInFlight: Gauge = new Gauge({
    name: 'agent_bridge_agent_calls_in_flight',
    help: 'Agent service calls sent and not yet answered in full',
    registers: [this.registry],
    collect: (): void => this.agentCallsInFlight.set(this.agentCalls().inFlight),
  });

  readonly agentCallsWaiting: Gauge = new Gauge({
    name: 'agent_bridge_agent_calls_waiting',
    help: 'Agent service calls waiting for a connection to open (the pool has no cap: this is connecting)',
    registers: [this.registry],
    collect: (): void => this.agentCallsWaiting.set(this.agentCalls().waiting),
  });

  /** Reports the agent client's calls in the two gauges above. */
  watchAgentCalls(counts: () => { waiting: number; inFlight: number }): void {
    this.agentCalls = counts;
  }

  /** Set by the composition root: the worker's answers waiting for their turn to post. */
  private repliesWaiting: () => number = () => 0;

  readonly repliesWaitingToPost: Gauge = new Gauge({
    name: 'agent_bridge_replies_waiting_to_post',
    help: 'Answered messages waiting for their turn to post (a worker posts a few at a time, in the order the answers came)',
    registers: [this.registry],
    collect: (): void => this.repliesWaitingToPost.set(this.repliesWaiting()),
  });

  /** Reports the worker's answers waiting to post in the gauge above. */
  watchRepliesWaiting(count: () => number): void {
    this.repliesWaiting = count;
  }

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'agent_bridge_' });
  }
}
