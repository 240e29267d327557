import { NO_ACCOUNT_CODE } from '../accounts/caller-agent.js';
import { withTimeout } from '../core/with-timeout.js';
import { BridgeError } from '../core/errors.js';
import { formatWait } from '../quota/message.js';

/**
 * What went wrong with a call to the agent service, in plain words (a sentence without a
 * final full stop). The client's messages are secret-free by contract.
 */
export function describeAgentProblem(err: unknown): string {
  if (!(err instanceof BridgeError)) return 'something went wrong while talking to the agent service';
  if (err.code === NO_ACCOUNT_CODE) return 'this workspace has no agent account yet: an admin can set one up with the `setup` command';
  switch (err.kind) {
    case 'unauthorized':
      return 'the agent service did not accept our credentials (check AGENT_API_KEY or the dashboard session)';
    case 'forbidden':
      return `the agent service refused access: ${err.message}`;
    case 'not_found':
      return 'the agent service answered "not found"';
    case 'rate_limited':
      return err.retryAfterMs !== undefined
        ? `the agent service is rate limiting us; try again in ${formatWait(err.retryAfterMs)}`
        : 'the agent service is rate limiting us; try again shortly';
    case 'server_error':
      return 'the agent service had an internal error; try again shortly';
    case 'timeout':
      return "the agent service didn't answer in time";
    case 'network':
      return "the agent service can't be reached";
    case 'invalid_response':
      return 'the agent service answered something unexpected';
    default:
      return `the agent service refused: ${err.message}`;
  }
}

/** Capitalised, with a full stop. */
export function sentence(text: string): string {
  const t = text.trim();
  return `${t.charAt(0).toUpperCase()}${t.slice(1)}${/[.!?]$/.test(t) ? '' : '.'}`;
}

/** `promise`, or a timeout BridgeError naming `what` when it takes longer than `ms` (commands' probes). */
export function probeWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return withTimeout(promise, ms, () => {
    throw new BridgeError('agent', 'timeout', `${what} took longer than ${ms} ms`);
  });
}
