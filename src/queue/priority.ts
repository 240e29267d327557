/** BullMQ's largest priority (its PRIORITY_LIMIT, 2^21 − 1: a larger one is refused); lower runs first. */
export const LOWEST_PRIORITY = 2_097_151;

/**
 * A channel's backlog as a BullMQ priority: the power of two at or below it (1, 2, 4, …), so
 * a busier channel's jobs still rank behind a quieter one's, while a job going back in line
 * seldom needs its priority rewritten (a round trip) as its backlog moves by one.
 */
export function backlogPriority(backlog: number): number {
  if (backlog <= 1) return 1;
  return Math.min(2 ** Math.floor(Math.log2(backlog)), LOWEST_PRIORITY);
}
