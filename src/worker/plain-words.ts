
export { newReference } from '../core/reference.js';

/** At-most-once: what the user reads when the worker died during the agent call (never called twice). */
export const answerLostNotice = 'The answer was lost when the bridge restarted; please ask again.';

/** Ends a reply cut to `max` messages. */
export function replyCutNote(max: number): string {
  return `_(The answer was cut here: it was longer than ${max} messages.)_`;
}
