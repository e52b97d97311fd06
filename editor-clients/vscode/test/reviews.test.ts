import { describe, expect, it } from 'vitest';
import type { ReviewEditParams } from '../src/protocol';
import {
  acceptance,
  addedLines,
  baseName,
  hunkHeader,
  hunkLine,
  parseReviewUriPath,
  rejection,
  ReviewBook,
  reviewTitle,
  reviewUriPath,
} from '../src/reviews';

function params(toolCallId: string, path = 'src/m.py'): ReviewEditParams {
  return {
    sessionId: 's1',
    toolCallId,
    toolName: 'edit',
    uri: `file:///w/${path}`,
    path,
    oldText: 'b = 2\n',
    newText: "b = 'two'\n",
  };
}

describe('the review diff', () => {
  it('is titled by the file name', () => {
    expect(reviewTitle({ path: 'src/m.py' })).toBe("m.py: agent's change (review)");
    expect(reviewTitle({ path: 'm.py' })).toBe("m.py: agent's change (review)");
    expect(baseName('a\\b\\c.ts')).toBe('c.ts');
  });

  it('has one URI path per side that ends with the file path and parses back', () => {
    expect(reviewUriPath(3, 'original', 'src/m.py')).toBe('/3/original/src/m.py');
    expect(reviewUriPath(3, 'proposed', 'src/m.py')).toBe('/3/proposed/src/m.py');
    expect(reviewUriPath(4, 'proposed', '../x/./y.py')).toBe('/4/proposed/x/y.py');
    expect(reviewUriPath(5, 'original', '')).toBe('/5/original/file');
    expect(parseReviewUriPath('/3/proposed/src/m.py')).toEqual({ id: 3, side: 'proposed' });
    expect(parseReviewUriPath('/3/original/m.py')).toEqual({ id: 3, side: 'original' });
    expect(parseReviewUriPath('/w/src/m.py')).toBeUndefined();
    expect(parseReviewUriPath('/3/other/m.py')).toBeUndefined();
  });

  it('sends a rejection with its reason trimmed, none when nothing was typed or Escape pressed', () => {
    expect(rejection('  keep b numeric ')).toEqual({ outcome: 'reject', reason: 'keep b numeric' });
    expect(rejection('   ')).toEqual({ outcome: 'reject' });
    expect(rejection(undefined)).toEqual({ outcome: 'reject' });
  });
});

describe('ReviewBook', () => {
  it('keeps the pending reviews in order and settles each with its answer', async () => {
    const book = new ReviewBook();
    let changes = 0;
    book.onChange(() => changes++);
    const a = book.add(params('c1'));
    const b = book.add(params('c2', 'n.py'));
    expect(book.size).toBe(2);
    expect(book.oldest()?.id).toBe(a.id);
    expect(book.infos()).toEqual([
      { id: a.id, sessionId: 's1', toolCallId: 'c1', toolName: 'edit', path: 'src/m.py' },
      { id: b.id, sessionId: 's1', toolCallId: 'c2', toolName: 'edit', path: 'n.py' },
    ]);
    expect(book.text(a.id, 'original')).toBe('b = 2\n');
    expect(book.text(a.id, 'proposed')).toBe("b = 'two'\n");
    // the second one answered first (by its tab)
    expect(book.answer(b.id, { outcome: 'reject', reason: 'no' })).toBe(true);
    expect(await b.answer).toEqual({ outcome: 'reject', reason: 'no' });
    expect(book.oldest()?.id).toBe(a.id);
    expect(book.answer(a.id, { outcome: 'accept' })).toBe(true);
    expect(await a.answer).toEqual({ outcome: 'accept' });
    expect(book.size).toBe(0);
    expect(book.oldest()).toBeUndefined();
    expect(book.text(a.id, 'original')).toBeUndefined();
    expect(changes).toBe(4);
  });

  it('answers each review once: a later answer or cancel is ignored', async () => {
    const book = new ReviewBook();
    const a = book.add(params('c1'));
    expect(book.answer(a.id, { outcome: 'accept' })).toBe(true);
    expect(book.answer(a.id, { outcome: 'reject' })).toBe(false);
    expect(book.cancel(a.id)).toBe(false);
    expect(await a.answer).toEqual({ outcome: 'accept' });
  });

  it('ends a review the server cancelled without an answer, and the user can no longer answer it', async () => {
    const book = new ReviewBook();
    const a = book.add(params('c1'));
    const b = book.add(params('c2'));
    expect(book.cancel(a.id)).toBe(true);
    expect(await a.answer).toBeUndefined();
    expect(book.answer(a.id, { outcome: 'accept' })).toBe(false);
    expect(book.pending().map((r) => r.id)).toEqual([b.id]);
    book.cancelAll();
    expect(await b.answer).toBeUndefined();
    expect(book.size).toBe(0);
  });

  it('gives every review its own id', () => {
    const book = new ReviewBook();
    const ids = [book.add(params('c1')), book.add(params('c1')), book.add(params('c2'))].map((r) => r.id);
    expect(new Set(ids).size).toBe(3);
  });
});

describe('review hunk by hunk', () => {
  const hunks = [
    { oldStart: 1, oldLines: 3, newStart: 1, newLines: 3, lines: ['-a', '+A', ' b', ' c'] },
    { oldStart: 10, oldLines: 4, newStart: 10, newLines: 4, lines: [' h', ' i', ' j', '-k', '+K', ' l'] },
    { oldStart: 20, oldLines: 3, newStart: 20, newLines: 2, lines: [' s', '-t', ' u'] },
  ];
  const proposal = { newText: 'A\nb\n', hunks };

  it('answers accept when no hunk was rejected, reject when all were, else the hunks accepted', () => {
    expect(acceptance(proposal, new Set())).toEqual({ outcome: 'accept' });
    expect(acceptance(proposal, new Set([1]))).toEqual({ outcome: 'accept', hunks: [0, 2] });
    expect(acceptance(proposal, new Set([2, 0]))).toEqual({ outcome: 'accept', hunks: [1] });
    expect(acceptance(proposal, new Set([0, 1, 2]))).toEqual({ outcome: 'reject' });
    // a server without hunks: accept as before
    expect(acceptance({ newText: 'x' }, new Set())).toEqual({ outcome: 'accept' });
  });

  it('answers the edited text when the right side differs from the proposal (hunk marks do not apply)', () => {
    expect(acceptance(proposal, new Set([1]), 'A\nb edited\n')).toEqual({ outcome: 'accept', text: 'A\nb edited\n' });
    expect(acceptance(proposal, new Set(), 'A\nb\n')).toEqual({ outcome: 'accept' });
  });

  it('puts a hunk lens on its first changed line, and knows the lines it adds', () => {
    expect(hunks.map((h) => hunkLine(h, 100))).toEqual([0, 12, 20]);
    expect(hunkLine(hunks[1]!, 5)).toBe(4);
    expect(hunkLine({ oldStart: 1, oldLines: 1, newStart: 0, newLines: 0, lines: ['-x'] }, 0)).toBe(0);
    expect(hunks.map(addedLines)).toEqual([[0], [12], []]);
    expect(hunkHeader(hunks[1]!)).toBe('@@ -10,4 +10,4 @@');
  });

  it('keeps the marks of a pending review; Accept answers from them and the saved text', async () => {
    const book = new ReviewBook();
    const review = book.add({ ...params('c1'), hunks });
    expect(book.markHunk(review.id, 1, false)).toBe(true);
    expect(book.markHunk(review.id, 3, false)).toBe(false);
    expect(book.markHunk(review.id, 0, false)).toBe(true);
    expect(book.markHunk(review.id, 0, true)).toBe(true);
    expect(book.rejectedHunks(review.id)).toEqual([1]);
    expect(book.accept(review.id)).toEqual({ outcome: 'accept', hunks: [0, 2] });
    expect(await review.answer).toEqual({ outcome: 'accept', hunks: [0, 2] });
    expect(book.markHunk(review.id, 0, false)).toBe(false);

    const edited = book.add({ ...params('c2'), hunks });
    expect(book.edit(edited.id, 'mine\n')).toBe(true);
    expect(book.text(edited.id, 'proposed')).toBe('mine\n');
    expect(book.text(edited.id, 'original')).toBe('b = 2\n');
    expect(book.accept(edited.id)).toEqual({ outcome: 'accept', text: 'mine\n' });
    expect(book.edit(edited.id, 'late\n')).toBe(false);

    const open = book.add({ ...params('c3'), hunks });
    book.markHunk(open.id, 2, false);
    // the open document's text wins over the saved one
    expect(book.accept(open.id, "b = 'two'\n")).toEqual({ outcome: 'accept', hunks: [0, 1] });
  });
});
