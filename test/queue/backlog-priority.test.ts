import { PRIORITY_LIMIT } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { backlogPriority, LOWEST_PRIORITY } from '../../src/queue/priority.js';

describe('a channel backlog as a BullMQ priority', () => {
  it('is the power of two at or below the backlog: busier channels rank behind, a backlog moving by one seldom changes it', () => {
    expect([0, 1, 2, 3, 4, 7, 8, 200, 1_000].map(backlogPriority)).toEqual([1, 1, 2, 2, 4, 4, 8, 128, 512]);
  });

  it("never passes BullMQ's limit, which refuses the job", () => {
    expect(LOWEST_PRIORITY).toBe(PRIORITY_LIMIT);
    expect(backlogPriority(10_000_000)).toBe(PRIORITY_LIMIT);
  });
});
