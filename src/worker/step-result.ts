import type { Logger } from '../logger.js';
import type { Decision } from './error-policy.js';

/** How one message's turn ended: what the chat worker does with its job next. */
export type StepResult =
  | { outcome: 'replied' | 'gave_up' | 'withdrawn' }
  /** Another worker owns the job now (this one was paused past its lock): stop, post nothing. */
  | { outcome: 'lost' }
  | { outcome: 'retry'; decision: Exclude<Decision, { action: 'give-up' }> };

/** A fenced record found the job's lock taken over: this worker stops where it is. */
export function lostJob(log: Logger): StepResult {
  log.warn('lost the job lock (this worker was paused or too slow); another worker answers instead');
  return { outcome: 'lost' };
}
