import { NO_ACCOUNT_CODE } from '../accounts/caller-agent.js';
import { BridgeError, THREAD_UNREADABLE, type ErrorKind } from '../core/errors.js';
import { formatWait } from '../quota/message.js';
import { LONG_AGENT_WAIT_MS, MAX_RETRY_AFTER_MS } from './retry-after.js';

/**
 * The one set of words for what went wrong with the agent service: per error kind, what the
 * person who asked reads (what to do) and what an admin reads (what is wrong). Messages from the
 * client are secret-free by contract.
 */
/** User wordings more than one kind shares. */
const NOT_ALLOWED = "agent-bridge isn't allowed to use the agent service. Please tell an admin.";
const TROUBLE = 'The agent service is having trouble right now. Please try again later.';
const SOMETHING_WENT_WRONG = 'Something went wrong while answering. Please try again.';

const WORDS: Record<ErrorKind, { user: string; admin: (err: BridgeError) => string }> = {
  unauthorized: {
    user: NOT_ALLOWED,
    admin: () => 'the agent service did not accept our credentials (check AGENT_API_KEY or the dashboard session)',
  },
  forbidden: {
    user: NOT_ALLOWED,
    admin: (err) => `the agent service refused access: ${err.message}`,
  },
  not_found: {
    user: "This channel's agent instance wasn't found. An admin can bind another one with /agent bind.",
    admin: () => 'the agent service answered "not found"',
  },
  rate_limited: {
    user: 'The agent service is busy right now. Please try again in a few minutes.',
    admin: (err) =>
      err.retryAfterMs !== undefined ? `the agent service is rate limiting us; try again in ${formatWait(err.retryAfterMs)}` : 'the agent service is rate limiting us; try again shortly',
  },
  bad_request: {
    user: "The agent service couldn't accept this message.",
    admin: (err) => `the agent service refused: ${err.message}`,
  },
  server_error: {
    user: TROUBLE,
    admin: () => 'the agent service had an internal error; try again shortly',
  },
  network: {
    user: TROUBLE,
    admin: () => "the agent service can't be reached",
  },
  timeout: {
    user: "The agent didn't answer in time. Please try again.",
    admin: () => "the agent service didn't answer in time",
  },
  invalid_response: {
    user: "The agent service sent an answer that couldn't be read. Please try again.",
    admin: () => 'the agent service answered something unexpected',
  },
  refused: {
    user: SOMETHING_WENT_WRONG,
    admin: (err) => `the agent service refused: ${err.message}`,
  },
};

/** What the user reads when the bridge gives up on their message. Never contains a secret. */
export function explainFailure(error: unknown): string {
  if (!(error instanceof BridgeError)) return SOMETHING_WENT_WRONG;
  if (error.code === THREAD_UNREADABLE) {
    return "This message wasn't answered: this chat kept refusing to let me read the thread (it limits how often apps may), and without it I'd answer out of context. Please try again in a minute.";
  }
  if (error.source !== 'agent') return 'The reply could not be posted here. Please try again.';
  if (error.kind === 'bad_request' && error.status === 409) {
    // The service's own reason (already scrubbed of secrets by the client), e.g. "instance x is stopped".
    const reason = /^agent service answered 409: (.{1,200})$/.exec(error.message)?.[1];
    return `This channel's agent instance is stopped or not ready${reason ? ` (the agent service said: ${reason})` : ''}. Please ask an admin to start it, or to bind another instance.`;
  }
  if (error.retryAfterMs !== undefined && error.retryAfterMs > LONG_AGENT_WAIT_MS && (error.kind === 'rate_limited' || error.kind === 'server_error')) {
    const when = error.retryAfterMs >= MAX_RETRY_AFTER_MS ? 'in an hour or more' : `in ${formatWait(error.retryAfterMs)}`;
    const what = error.kind === 'rate_limited' ? "The agent service's usage limit has been reached" : 'The agent service is unavailable for now';
    return `${what}. Please try again ${when}.`;
  }
  if (error.kind === 'invalid_response' && error.code === 'response_too_large') return "The agent's answer was too long to post here. Please ask for a shorter answer.";
  if (error.kind === 'invalid_response' && error.code === 'answer_unreadable') return "The agent answered, but its answer didn't arrive whole and couldn't be read. Please ask again.";
  return WORDS[error.kind]?.user ?? SOMETHING_WENT_WRONG;
}

/** What went wrong with a call to the agent service, for an admin (a sentence without a final full stop). */
export function describeAgentProblem(err: unknown): string {
  if (!(err instanceof BridgeError)) return 'something went wrong while talking to the agent service';
  if (err.code === NO_ACCOUNT_CODE) return 'this workspace has no agent account yet: an admin can set one up with the `setup` command';
  return WORDS[err.kind]?.admin(err) ?? `the agent service refused: ${err.message}`;
}
