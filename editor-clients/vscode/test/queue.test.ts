import { describe, expect, it } from 'vitest';
import {
  departed,
  EMPTY_QUEUE,
  findItem,
  movedItem,
  positionOf,
  queueFrom,
  queueItems,
  queueSize,
  removedText,
  withoutItem,
  withText,
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

  it('keeps the editor context of a queued item (the panel says "+1 attached")', () => {
    const context = [{ type: 'file' as const, uri: 'file:///w/a.py' }];
    const state = queueFrom({ steering: [{ id: 'q1', kind: 'steering', text: 't', context }], followUp: [] });
    expect(state.steering[0]?.context).toEqual(context);
    expect(queueFrom({ steering: [{ id: 'q1', kind: 'steering', text: 't', context: [] }] }).steering[0]).not.toHaveProperty('context');
  });

  it('edits one item in place, keeping its place and the rest', () => {
    const state = queueFrom(notification);
    const next = withText(state, 'q2', 'use spaces');
    expect(queueItems(next).map((item) => `${item.id}:${item.text}`)).toEqual(['q1:stop editing', 'q2:use spaces', 'q3:then run the tests']);
    expect(findItem(state, 'q2')?.text).toBe('use tabs');
  });

  it('moves an item within its own queue, clamped to its ends, as agent/moveQueueItem does', () => {
    const state = queueFrom({
      steering: [
        { id: 'a', kind: 'steering', text: 'a' },
        { id: 'b', kind: 'steering', text: 'b' },
        { id: 'c', kind: 'steering', text: 'c' },
      ],
      followUp: notification.followUp,
    });
    const ids = (s: ReturnType<typeof queueFrom>): string[] => queueItems(s).map((item) => item.id);
    expect(ids(movedItem(state, 'c', 0))).toEqual(['c', 'a', 'b', 'q3']);
    expect(ids(movedItem(state, 'a', 1))).toEqual(['b', 'a', 'c', 'q3']);
    expect(ids(movedItem(state, 'a', 99))).toEqual(['b', 'c', 'a', 'q3']); // past the end: last of its own queue
    expect(ids(movedItem(state, 'q3', 0))).toEqual(['a', 'b', 'c', 'q3']); // the follow-ups stay after the steering
    expect(movedItem(state, 'nope', 0)).toEqual(state);
    expect(positionOf(state, 'b')).toEqual({ index: 1, size: 3 });
    expect(positionOf(state, 'q3')).toEqual({ index: 0, size: 1 });
    expect(positionOf(state, 'nope')).toEqual({ index: -1, size: 0 });
  });
});
