import { describe, expect, it } from 'vitest';
import { sustainedRate } from '../../bench/scenarios/slow-agent.js';

// Scenario 3's "held" share of ideal: replies per second once every slot has answered once.
describe('sustainedRate', () => {
  it('counts from the slots-th reply to the last, leaving the first wave out', () => {
    // 2 slots, a 1 s agent: the first wave lands at 1.0 and 1.6 s (a 0.6 s ramp), then every
    // slot answers once a second.
    const replies = [1000, 1600, 2000, 2600, 3000, 3600];
    expect(sustainedRate(replies, 2)).toBeCloseTo(4 / 2.0, 6);
  });

  it('does not depend on arrival order', () => {
    expect(sustainedRate([3600, 1000, 2600, 1600, 3000, 2000], 2)).toBeCloseTo(2, 6);
  });

  it('has no figure with one wave', () => {
    expect(sustainedRate([1000, 1600], 2)).toBeUndefined();
    expect(sustainedRate([1000, 1000, 1000], 2)).toBeUndefined();
  });
});
