import { BridgeError } from '../core/errors.js';

export { newReference } from '../core/reference.js';

/** What the user reads when the bridge gives up on their message. Never contains a secret. */
export function explainFailure(error: unknown): string {
  if (!(error instanceof BridgeError)) return 'Something went wrong while answering. Please try again.';
  if (error.source !== 'agent') return 'The reply could not be posted here. Please try again.';
  switch (error.kind) {
    case 'timeout':
      return "The agent didn't answer in time. Please try again.";
    case 'rate_limited':
      return 'The agent service is busy right now. Please try again in a few minutes.';
    case 'server_error':
    case 'network':
      return 'The agent service is having trouble right now. Please try again later.';
    case 'not_found':
      return "This channel's agent instance wasn't found. An admin can bind another one with /agent bind.";
    case 'unauthorized':
    case 'forbidden':
      return "agent-bridge isn't allowed to use the agent service. Please tell an admin.";
    case 'bad_request':
      if (error.status === 409) {
        // The service's own reason (already scrubbed of secrets by the client), e.g. "instance x is stopped".
        const reason = /^agent service answered 409: (.{1,200})$/.exec(error.message)?.[1];
        return `This channel's agent instance is stopped or not ready${reason ? ` (the agent service said: ${reason})` : ''}. Please ask an admin to start it, or to bind another instance.`;
      }
      return "The agent service couldn't accept this message.";
    case 'invalid_response':
      if (error.code === 'response_too_large') return "The agent's answer was too long to post here. Please ask for a shorter answer.";
      return "The agent service sent an answer that couldn't be read. Please try again.";
    default:
      return 'Something went wrong while answering. Please try again.';
  }
}

/** At-most-once: what the user reads when the worker died during the agent call (never called twice). */
export const answerLostNotice = 'The answer was lost when the bridge restarted; please ask again.';

/** Ends a reply cut to `max` messages. */
export function replyCutNote(max: number): string {
  return `_(The answer was cut here: it was longer than ${max} messages.)_`;
}
