import { describe, expect, it } from 'vitest';
import type { BranchResult, Message, MessagesResult, TreeResult } from '../src/protocol';
import {
  branchEntries,
  branchOutcome,
  entryBefore,
  fileConflicts,
  findUserMessage,
  problemLines,
  retryOnConflict,
} from '../src/tree';

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
const context: Message = {
  role: 'custom',
  customType: 'editorContext',
  content: 'The user attached context from the editor: ...',
  display: true,
} as Message;

function transcript(...messages: Message[]): MessagesResult {
  return { messages, total: messages.length, entryIds: messages.map((_, i) => `e${i + 1}`) };
}

const TREE: TreeResult = {
  leafId: 'e4',
  entries: [
    { id: 'e1', parentId: null, type: 'message', role: 'user', preview: 'one', timestamp: 1, onBranch: true },
    { id: 'e2', parentId: 'e1', type: 'message', role: 'assistant', preview: 'ok', timestamp: 2, onBranch: true },
    { id: 'e3', parentId: 'e2', type: 'message', role: 'custom', preview: 'ctx', timestamp: 3, onBranch: true },
    { id: 'e4', parentId: 'e3', type: 'message', role: 'user', preview: 'two', timestamp: 4, onBranch: true },
  ],
  branches: [],
};

describe('the user message a rewind or a fork starts from', () => {
  it('is the message at the row index when its text matches', () => {
    const result = transcript(user('one'), assistant('ok'), user('two'));
    expect(findUserMessage(result, 2, 'two')).toEqual({ entryId: 'e3', text: 'two' });
    expect(findUserMessage(result, 0, 'one')).toEqual({ entryId: 'e1', text: 'one' });
  });

  it('starts at the editorContext message sent with it (one delivery)', () => {
    const result = transcript(user('one'), assistant('ok'), context, user('two'));
    expect(findUserMessage(result, 3, 'two')).toEqual({ entryId: 'e3', text: 'two' });
  });

  it('falls back to the only user message of that text when the index is off, else none', () => {
    const result = transcript(user('one'), assistant('ok'), user('two'), assistant('ok'), user('one'));
    expect(findUserMessage(result, 1, 'two')).toEqual({ entryId: 'e3', text: 'two' });
    expect(findUserMessage(result, 1, 'one')).toBeUndefined(); // twice: cannot tell which
    expect(findUserMessage(result, 9, 'three')).toBeUndefined();
  });

  it('goes to the parent entry in the tree: null for the first message, undefined for an unknown one', () => {
    expect(entryBefore(TREE, 'e1')).toBeNull();
    expect(entryBefore(TREE, 'e3')).toBe('e2');
    expect(entryBefore(TREE, 'nope')).toBeUndefined();
  });
});

describe('file conflicts', () => {
  const conflict = {
    kind: 'fileConflict',
    data: { kind: 'fileConflict', files: [{ path: 'a.txt', reason: 'changed in the editor since the edit' }, { path: 'b.txt' }, 7] },
  };

  it('reads the files of a fileConflict error, and nothing of other errors', () => {
    expect(fileConflicts(conflict)).toEqual([
      { path: 'a.txt', reason: 'changed in the editor since the edit' },
      { path: 'b.txt', reason: 'conflict' },
    ]);
    expect(fileConflicts({ kind: 'busy', data: { files: [] } })).toBeUndefined();
    expect(fileConflicts(new Error('x'))).toBeUndefined();
    expect(fileConflicts({ kind: 'fileConflict' })).toEqual([]);
    expect(problemLines(fileConflicts(conflict) ?? [])).toBe('a.txt: changed in the editor since the edit\nb.txt: conflict');
  });

  const done: BranchResult = { leafId: 'e2', messageCount: 2, reverted: [], skipped: [{ path: 'a.txt', reason: 'changed' }] };

  it('asks once and repeats the request with force when the user agrees', async () => {
    const forces: boolean[] = [];
    const asked: unknown[] = [];
    const result = await retryOnConflict(
      async (force) => {
        forces.push(force);
        if (!force) throw conflict;
        return done;
      },
      async (files) => {
        asked.push(files);
        return true;
      },
    );
    expect(result).toBe(done);
    expect(forces).toEqual([false, true]);
    expect(asked).toEqual([fileConflicts(conflict)]);
  });

  it('leaves it when the user declines; throws any other error without asking', async () => {
    const forces: boolean[] = [];
    const declined = await retryOnConflict(
      async (force) => {
        forces.push(force);
        throw conflict;
      },
      async () => false,
    );
    expect(declined).toBeUndefined();
    expect(forces).toEqual([false]);
    let asked = false;
    const busy = retryOnConflict(
      async () => {
        throw Object.assign(new Error('The session is running'), { kind: 'busy' });
      },
      async () => (asked = true),
    );
    await expect(busy).rejects.toThrow('The session is running');
    expect(asked).toBe(false);
  });
});

describe('what a rewind did', () => {
  it('groups the files by what happened to them, then the skipped ones with their reason', () => {
    const result: BranchResult = {
      leafId: 'e1',
      messageCount: 1,
      reverted: [
        { path: 'open.txt', action: 'reverted' },
        { path: 'closed.txt', action: 'reverted' },
        { path: 'new.txt', action: 'deleted' },
      ],
      skipped: [{ path: 'busy.txt', reason: 'changed since the edit' }],
    };
    expect(branchOutcome('Rewound', result)).toBe(
      'Rewound: reverted open.txt, closed.txt; deleted new.txt. Skipped: busy.txt (changed since the edit).',
    );
    expect(branchOutcome('Switched branch', { leafId: 'x', messageCount: 3, reverted: [{ path: 'a', action: 'applied' }], skipped: [] })).toBe(
      'Switched branch: applied again a.',
    );
    expect(branchOutcome('Rewound', { leafId: null, messageCount: 0, reverted: [], skipped: [] })).toBe('Rewound; no file changed.');
  });
});

describe('the branch picker', () => {
  it('lists each branch with its size and age, the current one marked, and where it ends', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const entries = branchEntries(
      {
        entries: [
          ...TREE.entries,
          { id: 'e5', parentId: 'e4', type: 'message', role: 'assistant', preview: 'Changed the files.', timestamp: 5, onBranch: false },
        ],
        branches: [
          { leafId: 'e5', preview: 'Change the files.', timestamp: now - 120_000, messageCount: 5, current: false },
          { leafId: 'e2', preview: '  ', timestamp: now - 5_000, messageCount: 1, current: true },
          { leafId: 'e4', preview: 'two', timestamp: now, messageCount: 4, current: false },
        ],
      },
      now,
    );
    expect(entries).toEqual([
      { leafId: 'e5', label: 'Change the files.', detail: '5 messages · 2 min ago', last: 'Changed the files.', current: false },
      { leafId: 'e2', label: '(empty)', detail: '1 message · just now · current', last: 'ok', current: true },
      { leafId: 'e4', label: 'two', detail: '4 messages · just now', current: false }, // it ends where its preview is
    ]);
  });
});
