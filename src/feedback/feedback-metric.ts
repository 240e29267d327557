import { Counter, type Registry } from 'prom-client';

const counters = new WeakMap<Registry, Counter<'agent_instance' | 'rating'>>();

/**
 * `agent_bridge_feedback_total{agent_instance,rating}`: votes recorded (a new vote, or a changed
 * one; clicking the same button again counts once). One counter per registry, however many
 * stores a process makes.
 */
export function feedbackCounter(registry: Registry): Counter<'agent_instance' | 'rating'> {
  let c = counters.get(registry);
  if (!c) {
    c = new Counter({
      name: 'agent_bridge_feedback_total',
      help: 'Feedback votes on agent replies, by agent instance and rating (positive, negative)',
      labelNames: ['agent_instance', 'rating'] as const,
      registers: [registry],
    });
    counters.set(registry, c);
  }
  return c;
}
