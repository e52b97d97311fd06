import { describe, expect, it } from 'vitest';
import {
  departed,
  EMPTY_QUEUE,
  findItem,
  queueFrom,
  queueItems,
  queueSize,
  removedText,
  withoutItem,
} from '../src/queue';

const notification = {
  sessionId: 's1',
  steering: [
    { id: 'q1', kind: 'steering' as const, text: 'stop editing' },
    { id: 'q2', kind: 'steering' as const, text: 'use tabs' },
  ],
  followUp: [{ id: 'q3', kind: 'followUp' as const, text: 'then run the tests' }],
};

describe('queue state', () => {
  it('reads a notification: steering first, each list in order', () => {
    const state = queueFrom(notification);
    expect(queueItems(state).map((item) => item.id)).toEqual(['q1', 'q2', 'q3']);
    expect(queueSize(state)).toBe(3);
    expect(findItem(state, 'q3')).toEqual({ id: 'q3', kind: 'followUp', text: 'then run the tests' });
  });

  it('reads missing or broken lists as empty', () => {
    expect(queueFrom(undefined)).toEqual(EMPTY_QUEUE);
    expect(queueFrom({ steering: [{ nope: 1 } as never] })).toEqual(EMPTY_QUEUE);
  });

  it('takes the kind from the list an item is in', () => {
    const state = queueFrom({ steering: [{ id: 'x', kind: 'followUp', text: 't' }], followUp: [] });
    expect(state.steering[0]?.kind).toBe('steering');
  });

  it('removes one item without touching the state it came from', () => {
    const state = queueFrom(notification);
    const next = withoutItem(state, 'q2');
    expect(queueItems(next).map((item) => item.id)).toEqual(['q1', 'q3']);
    expect(queueSize(state)).toBe(3);
    expect(withoutItem(state, 'nope')).toEqual(state);
  });

  it('tells which items left: delivered or removed', () => {
    const before = queueFrom(notification);
    const after = queueFrom({ steering: [notification.steering[1]!], followUp: notification.followUp });
    expect(departed(before, after).map((item) => item.id)).toEqual(['q1']);
    expect(departed(after, before)).toEqual([]);
  });

  it('gives removed items back as prompt text', () => {
    expect(removedText(queueFrom(notification))).toBe('stop editing\n\nuse tabs\n\nthen run the tests');
    expect(removedText(EMPTY_QUEUE)).toBe('');
  });
});
