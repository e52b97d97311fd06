import { describe, expect, it } from 'vitest';
import {
  changeNodes,
  changesParams,
  changeTitle,
  changeUriPath,
  fileDescription,
  othersToRevert,
  revertOutcome,
  revertParams,
  viewMessage,
} from '../src/changeTree';
import type { ChangesResult } from '../src/protocol';

/** A getChanges result of a run whose bash did sed -i (two hunks), rm, mv and created a file. */
const RESULT: ChangesResult = {
  runId: 'run-2',
  fromEntryId: 'e1',
  toEntryId: 'e9',
  checkpoints: 'on',
  files: [
    {
      path: 'a.txt',
      uri: 'file:///w/a.txt',
      status: 'modified',
      by: ['bash'],
      hunks: [
        { oldStart: 1, oldLines: 3, newStart: 1, newLines: 3, lines: ['-one', '+ONE', ' two', ' three'] },
        { oldStart: 18, oldLines: 3, newStart: 18, newLines: 4, lines: [' x', ' y', '-twenty', '+TWENTY', '+more'] },
      ],
    },
    { path: 'b.txt', uri: 'file:///w/b.txt', status: 'deleted', by: ['bash'], hunks: [{ oldStart: 1, oldLines: 1, newStart: 0, newLines: 0, lines: ['-b'] }] },
    { path: 'd.txt', uri: 'file:///w/d.txt', status: 'renamed', oldPath: 'c.txt', by: ['bash'], hunks: [] },
    { path: 'img.png', uri: 'file:///w/img.png', status: 'added', by: ['bash', 'write'], hunks: [], binary: true },
  ],
};

describe('the Changes view', () => {
  it('asks for the last run, or the whole session from its start', () => {
    expect(changesParams('s1', 'run')).toEqual({ sessionId: 's1' });
    expect(changesParams('s1', 'session')).toEqual({ sessionId: 's1', fromEntryId: null });
    expect(changesParams('s1', 'session', true)).toEqual({ sessionId: 's1', fromEntryId: null, text: true });
  });

  it('reverts in the span it listed: that run, or the session up to where it ended', () => {
    expect(revertParams('s1', 'run', RESULT, { files: ['a.txt'] })).toEqual({ sessionId: 's1', runId: 'run-2', files: ['a.txt'] });
    expect(revertParams('s1', 'session', RESULT, { hunks: [{ path: 'a.txt', index: 1 }] }, true)).toEqual({
      sessionId: 's1',
      fromEntryId: null,
      toEntryId: 'e9',
      hunks: [{ path: 'a.txt', index: 1 }],
      force: true,
    });
  });

  it('lists each file with its status and who changed it, its hunks as children', () => {
    const nodes = changeNodes(RESULT);
    expect(nodes.map((n) => [n.label, n.description, n.diffable, n.hunks.length])).toEqual([
      ['a.txt', 'modified · bash', true, 2],
      ['b.txt', 'deleted · bash', true, 1],
      ['d.txt', 'renamed from c.txt · bash', true, 0],
      ['img.png', 'added · binary · bash, write', false, 0],
    ]);
    const [first, second] = nodes[0]!.hunks;
    expect(first).toMatchObject({ kind: 'hunk', index: 0, label: '@@ -1,3 +1,3 @@', description: '+1 −1' });
    expect(second).toMatchObject({ index: 1, label: '@@ -18,3 +18,4 @@', description: '+2 −1', tooltip: ' x\n y\n-twenty\n+TWENTY\n+more' });
    expect(nodes[2]!.tooltip).toBe('d.txt: renamed (was c.txt), changed by bash');
    expect(fileDescription({ ...RESULT.files[0]!, recorded: false })).toBe('modified · not recorded · bash');
  });

  it('says what it lists, and when only write and edit are known', () => {
    expect(viewMessage('run', RESULT)).toBe('4 files changed in the last run.');
    expect(viewMessage('session', { files: [], checkpoints: 'on' })).toBe('No changes in this session.');
    expect(viewMessage('run', { files: [RESULT.files[0]!], checkpoints: 'unavailable' })).toBe(
      '1 file changed in the last run. Checkpoints are unavailable: only write and edit changes are known.',
    );
    expect(viewMessage('run', undefined)).toBe('No session yet.');
  });

  it('names the sides of a diff by generation and path, and titles it', () => {
    expect(changeUriPath(3, 'old', 'src/../m.py')).toBe('/3/old/src/m.py');
    expect(changeUriPath(3, 'new', '')).toBe('/3/new/file');
    expect(changeTitle({ path: 'src/m.py' }, 'run')).toBe('m.py: changes of the last run');
    expect(changeTitle({ path: 'm.py' }, 'session')).toBe("m.py: the session's changes");
  });

  it('offers Revert anyway only when something besides the conflicting files would be reverted', () => {
    const conflict = [{ path: 'a.txt', reason: 'changed since' }];
    expect(othersToRevert({ files: ['a.txt'] }, conflict)).toBe(false);
    expect(othersToRevert({ hunks: [{ path: 'a.txt', index: 1 }] }, conflict)).toBe(false);
    expect(othersToRevert({ files: ['a.txt', 'b.txt'] }, conflict)).toBe(true);
    expect(othersToRevert({}, conflict)).toBe(true);
  });

  it('says what a revert did in one line', () => {
    expect(
      revertOutcome({
        reverted: [
          { path: 'a.txt', action: 'reverted', hunks: [0] },
          { path: 'b.txt', action: 'restored' },
        ],
        skipped: [{ path: 'c.txt', reason: 'changed since' }],
      }),
    ).toBe('Reverted a.txt (hunk 1), b.txt. Skipped: c.txt (changed since).');
    expect(revertOutcome({ reverted: [], skipped: [] })).toBe('Nothing reverted.');
  });
});
