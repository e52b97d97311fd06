/**
 * The session's queue of steering and follow-up items (pure: no VS Code).
 *
 * The server owns the queue and reports every change with `agent/queue`; results of
 * `agent/clearQueue` and `agent/abort` carry it too. The panel shows it and lets the
 * user remove, edit (`agent/editQueueItem`) and reorder (`agent/moveQueueItem`) an item:
 * the change shows at once and is undone if the server refuses.
 */

import type { QueueItem, QueueLists } from './protocol';

export interface QueueState {
  readonly steering: readonly QueueItem[];
  readonly followUp: readonly QueueItem[];
}

export const EMPTY_QUEUE: QueueState = { steering: [], followUp: [] };

/** The state from the lists of a notification or result (unknown shapes read as empty). */
export function queueFrom(lists: Partial<QueueLists> | undefined): QueueState {
  const pick = (items: unknown, kind: QueueItem['kind']): QueueItem[] =>
    Array.isArray(items)
      ? items
          .filter((item): item is QueueItem => typeof item?.id === 'string' && typeof item?.text === 'string')
          .map((item) => ({
            id: item.id,
            kind,
            text: item.text,
            ...(item.images ? { images: item.images } : {}),
            ...(Array.isArray(item.context) && item.context.length > 0 ? { context: item.context } : {}),
          }))
      : [];
  return { steering: pick(lists?.steering, 'steering'), followUp: pick(lists?.followUp, 'followUp') };
}

/** Every item, steering first (it is delivered first), each list in order. */
export function queueItems(state: QueueState): QueueItem[] {
  return [...state.steering, ...state.followUp];
}

export function queueSize(state: QueueState): number {
  return state.steering.length + state.followUp.length;
}

export function findItem(state: QueueState, id: string): QueueItem | undefined {
  return queueItems(state).find((item) => item.id === id);
}

/** The state without one item (the optimistic view of a removal). */
export function withoutItem(state: QueueState, id: string): QueueState {
  return {
    steering: state.steering.filter((item) => item.id !== id),
    followUp: state.followUp.filter((item) => item.id !== id),
  };
}

/** The state with one item's text replaced (the optimistic view of an edit). */
export function withText(state: QueueState, id: string, text: string): QueueState {
  const edit = (items: readonly QueueItem[]): QueueItem[] => items.map((item) => (item.id === id ? { ...item, text } : item));
  return { steering: edit(state.steering), followUp: edit(state.followUp) };
}

/**
 * The state with one item moved to `index` of its own list (0: delivered first; past the
 * end: last), as `agent/moveQueueItem` moves it. An unknown id changes nothing.
 */
export function movedItem(state: QueueState, id: string, index: number): QueueState {
  const move = (items: readonly QueueItem[]): readonly QueueItem[] => {
    const from = items.findIndex((item) => item.id === id);
    if (from < 0) return items;
    const rest = items.filter((item) => item.id !== id);
    rest.splice(Math.max(0, Math.min(index, rest.length)), 0, items[from] as QueueItem);
    return rest;
  };
  return { steering: move(state.steering), followUp: move(state.followUp) };
}

/** Where `id` stands in its own list (`-1`: not queued), for the move buttons. */
export function positionOf(state: QueueState, id: string): { index: number; size: number } {
  for (const list of [state.steering, state.followUp]) {
    const index = list.findIndex((item) => item.id === id);
    if (index >= 0) return { index, size: list.length };
  }
  return { index: -1, size: 0 };
}

/** The items of `before` that are gone from `after`: delivered to the agent or removed. */
export function departed(before: QueueState, after: QueueState): QueueItem[] {
  const kept = new Set(queueItems(after).map((item) => item.id));
  return queueItems(before).filter((item) => !kept.has(item.id));
}

/** The items removed by `agent/clearQueue`'s result, as text to put back in the prompt box. */
export function removedText(removed: QueueState): string {
  return queueItems(removed)
    .map((item) => item.text)
    .join('\n\n');
}
