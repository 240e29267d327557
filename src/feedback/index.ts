/**
 * Feedback on agent replies: the store (one vote per user per reply, in Redis), the Prometheus
 * counter, the value a button carries, and the `/agent feedback` text. Platform-free; the
 * adapters draw the buttons and call {@link FeedbackStore.record} on a click.
 */
export { createFeedbackStore } from './feedback-store.js';
export type { FeedbackStore, FeedbackStoreOptions, FeedbackVote, InstanceFeedback, NegativeReply, Rating, RecordOutcome, SummaryOptions } from './feedback-store.js';
export { feedbackCounter } from './feedback-metric.js';
export { encodeFeedbackValue, decodeFeedbackValue, type FeedbackRef } from './feedback-value.js';
export { formatFeedbackSummary } from './format.js';
