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

/**
 * The priority a new job is added with when its channel has `backlog` unfinished messages (its
 * own included): 0, a plain job, when it is the channel's only one; else the backlog's priority.
 * The push (push-add.lua computes the same in Lua) and the worker's hand-off both use it.
 */
export function addPriority(backlog: number): number {
  return backlog > 1 ? backlogPriority(backlog) : 0;
}
